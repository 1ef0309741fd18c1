/** Shared constants of the knowledge base assistant. */

export const USER_GROUP = "pv_kb.group_pv_kb_user";
/** Longest question the panel sends (characters). */
export const MAX_QUESTION_LENGTH = 2000;
/** localStorage key for panel width, expanded flag and the open conversation. */
export const STORAGE_KEY = "pv_kb.chat";
export const MIN_PANEL_WIDTH = 320;
export const DEFAULT_PANEL_WIDTH = 460;

/**
 * The answer stream. Under Odoo's own /websocket prefix: the reverse-proxy configuration Odoo documents routes
 * it to the gevent worker, where a waiting answer holds no HTTP worker (docs/operations.md).
 */
export const STREAM_URL = "/websocket/pv_kb/ask/stream";
