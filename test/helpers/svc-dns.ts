import dns, { type LookupAddress, type LookupOptions } from 'node:dns';

/**
 * Preloaded (`node --import`) into a service process that a test runs against a real API server
 * with no cluster network: the cluster's DNS answers every `<service>.<namespace>.svc` name with
 * FELIS_TEST_SVC_ADDRESS (a loopback address where the test listens as the game's RCON port), as
 * a Service's cluster IP would. Every other name is resolved as usual. Test-only: never shipped.
 */
const address = process.env.FELIS_TEST_SVC_ADDRESS;
if (address) {
  const original = dns.lookup;
  type Callback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
  const patched = (hostname: string, options: LookupOptions | number | Callback, callback?: Callback) => {
    const done = (typeof options === 'function' ? options : callback)!;
    const opts = typeof options === 'object' ? options : {};
    if (!hostname.endsWith('.svc')) return (original as (...args: unknown[]) => void)(hostname, options, callback);
    process.nextTick(() => (opts.all ? done(null, [{ address, family: 4 }]) : done(null, address, 4)));
  };
  (dns as { lookup: unknown }).lookup = patched;
}
