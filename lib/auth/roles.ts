import { z } from "zod";

/**
 * People's roles (docs/product.md#people-in-the-loop), lowest first: a viewer sees
 * everything; an operator also approves, intervenes, answers and triages; an
 * admin also manages people, tokens and settings.
 */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];
export const roleSchema = z.enum(ROLES);

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** True when `role` includes everything `needed` may do. */
export function hasRole(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

/** Who acts on people's data: the board's pages and the human endpoints get one of these. */
export interface Person {
  id: string;
  username: string;
  role: Role;
}

/** What a person may do, for the client (buttons shown); the server checks again on every action. */
export function abilitiesOf(role: Role) {
  return { act: hasRole(role, "operator"), administer: hasRole(role, "admin") };
}
export type Abilities = ReturnType<typeof abilitiesOf>;
