import { BlockList, isIP } from 'node:net';

/**
 * A list of networks (`a.b.c.d/n`, `x::/n`, or a bare address, which is its own network) as a
 * block list: one parse for every setting that names networks.
 */
export function networkList(networks: readonly string[]): BlockList {
  const list = new BlockList();
  for (const network of networks) {
    const [address, prefix] = network.split('/') as [string, string | undefined];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, prefix === undefined ? (family === 'ipv6' ? 128 : 32) : Number(prefix), family);
  }
  return list;
}

/** Whether an address (already one spelling: client-ip.ts `normalizeIp`) is in the list; not an address: no. */
export function inNetworks(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}
