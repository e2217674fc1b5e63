import { BatonError } from "./errors";

/**
 * The members of an enum written once as a record with a value per member (a title, a
 * first direction), in the order the record lists them: for `z.enum` and for anything
 * shown in that order. A key that reads as an array index ("0", "12") would be listed
 * first whatever its place, so such keys are refused.
 */
export function enumMembers<Member extends string>(record: Readonly<Record<Member, unknown>>): readonly [Member, ...Member[]] {
  const members = Object.keys(record) as Member[];
  const indexLike = members.find((member) => /^(0|[1-9]\d*)$/.test(member));
  if (indexLike !== undefined) throw new BatonError("internal", `The enum member "${indexLike}" reads as an array index, so its order is lost: name it with a letter first.`);
  const [first, ...rest] = members;
  if (first === undefined) throw new BatonError("internal", "An enum needs at least one member.");
  return [first, ...rest];
}
