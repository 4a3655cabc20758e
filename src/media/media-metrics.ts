/**
 * The media lock's count on /metrics: RTP datagrams dropped before decoding because they came
 * from a source other than the call's locked one (strangers, and a NAT source's probation
 * packets; source-filter.ts). Read on scrape from `total` (the live calls' counts plus those of
 * ended calls), so nothing is counted per packet twice. A call whose socket is connected to its
 * source (connect-guard.ts) has the kernel drop strangers unseen: those are not counted.
 */
import client from 'prom-client';

export function registerRtpFilterMetric(registry: client.Registry, total: () => number): void {
  new client.Counter({
    name: 'switchboard_rtp_foreign_packets_total',
    help: 'RTP datagrams dropped before decoding: not from the call\'s locked media source',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(total());
    },
  });
}
