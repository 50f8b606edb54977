/** The front door of idle reclaim: a world stopped long enough is archived, then its volume given back. */
export { reclaimIdleWorlds, settleReclaim } from './service.js';
