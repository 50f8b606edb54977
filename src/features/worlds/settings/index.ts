/**
 * The front door of the worlds' settings: one table of every setting the worlds read, and the
 * one way to read them.
 */
export { readWorldTimes, WORLD_SETTINGS, worldSetting } from './settings.js';
