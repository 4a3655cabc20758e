/** The signalling socket's address on the page's own origin (ws: or wss: as the page is served). */
export function signallingUrl(location: { protocol: string; host: string }): string {
  return `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/api/user/webrtc`;
}
