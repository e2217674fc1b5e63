import "server-only";
import { BatonError } from "../core/errors";
import { hasRole, type Person, type Role } from "./roles";
import { personOfSession, SESSION_COOKIE } from "./sessions";

/** A cookie's value from a request's Cookie header. */
export function cookieOf(request: Request, name: string): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/** True when the browser is talking to Baton over https (directly or behind a proxy that says so). */
export function servedOverHttps(request: Request): boolean {
  const forwarded = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim();
  return (forwarded ?? new URL(request.url).protocol.replace(":", "")) === "https";
}

export async function personOfRequest(request: Request): Promise<Person | null> {
  return personOfSession(cookieOf(request, SESSION_COOKIE));
}

/**
 * Human actions come from Baton's own pages: refuse another origin (a page
 * elsewhere riding the person's cookie) and clients that say nothing of where
 * they come from. Browsers always send Origin on POST, PATCH and DELETE.
 */
export function assertSameOrigin(request: Request): void {
  const origin = request.headers.get("origin");
  const fetchSite = request.headers.get("sec-fetch-site");
  if (origin) {
    const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
    let originHost: string | null = null;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = null;
    }
    if (originHost !== null && originHost === host) return;
    throw new BatonError("forbidden", "Human actions are accepted only from Baton's own pages (the Origin header names another site).");
  }
  if (fetchSite === "same-origin") return;
  throw new BatonError("forbidden", "Human actions are accepted only from Baton's own pages: send the Origin header of this Baton.");
}

/**
 * THE check in front of every human action: from Baton's own pages, by a
 * signed-in person whose role allows it. An API token never acts as a person.
 */
export async function requirePerson(request: Request, needed: Role): Promise<Person> {
  if (request.headers.get("authorization")) {
    throw new BatonError("forbidden", "API tokens cannot act as a person; sign in to Baton in a browser.");
  }
  // Reads change nothing, and browsers omit Origin on some same-origin GETs (plain http, not localhost).
  if (request.method !== "GET" && request.method !== "HEAD") assertSameOrigin(request);
  const person = await personOfRequest(request);
  if (!person) throw new BatonError("unauthenticated", "Sign in to Baton first.");
  if (!hasRole(person.role, needed)) {
    throw new BatonError("forbidden", `This needs the ${needed} role; you are ${person.role}. Ask an admin.`, { role: person.role, needed });
  }
  return person;
}
