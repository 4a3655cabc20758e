/** Internal control flow of the parser; `parseMessage` turns it into an `{ok: false}` result. */
export class ParseReject {
  constructor(
    readonly error: string,
    readonly status = 400,
  ) {}
}

export function reject(error: string, status = 400): never {
  throw new ParseReject(error, status);
}
