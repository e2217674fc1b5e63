/** The session cookie's name; its own module so that proxy.ts imports no database code. */
export const SESSION_COOKIE = "baton_session";
