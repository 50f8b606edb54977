/**
 * The Minecraft (Java edition) listener on GAME_PORT. It knows the control plane only through its
 * internal face (the calls the game proxy makes, with the proxy's service token), never a
 * feature's code, so the features can change beneath it.
 */
export { startGameListener, type GameListener, type GameListenerOptions } from './listener.js';
export { InternalApi, InternalApiError, type ServerView } from './internal-api.js';
export { listenerPlayerUuid } from './protocol.js';
