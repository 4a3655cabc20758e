/** Methods defined by RFC 3261 and its extensions; anything else is "unknown" (501). */
export const KNOWN_METHODS: readonly string[] = [
  'ACK',
  'BYE',
  'CANCEL',
  'INFO',
  'INVITE',
  'MESSAGE',
  'NOTIFY',
  'OPTIONS',
  'PRACK',
  'PUBLISH',
  'REFER',
  'REGISTER',
  'SUBSCRIBE',
  'UPDATE',
];
