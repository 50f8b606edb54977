/** The front door of servers' wakes: a start within the node's capacity, the wake slot and cooldown, explicit stops, the wake settings. */
export { holdsSlot, startMayClear, startWithinCapacity, type Waker } from './capacity.js';
export { takeWakeSlot } from './wake-slot.js';
export { explicitStopSince, recordExplicitStop, stopWords } from './stops.js';
export { DEFAULT_IMAGE_SETTING, integerSetting, seedSetting, SERVER_SETTINGS, wakePolicyInForce, type WakePolicyView, writeSetting } from './settings.js';
