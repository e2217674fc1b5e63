/**
 * One value per process. Next bundles lib/ separately into the server's
 * instrumentation and into each route, and a dev reload loads a module again:
 * module-level state would be one copy per bundle. Shared state lives on
 * globalThis instead, under one name each, created on first use.
 */
export function singleton<T>(name: string, create: () => T): T {
  const store = globalThis as unknown as Record<string, unknown>;
  const key = `__baton${name}`;
  if (!(key in store)) store[key] = create();
  return store[key] as T;
}

/** A process-wide slot that starts empty and may be filled, replaced or emptied. */
export function processSlot<T>(name: string): { value: T | undefined } {
  return singleton<{ value: T | undefined }>(name, () => ({ value: undefined }));
}
