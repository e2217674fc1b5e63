import { Field, Input, type fieldAria } from "@/components/ui/field";

/** The name an admin gives a token, webhook or integration; `maxLength` is the server's limit for it. */
export function NameField({ value, onChange, maxLength, aria }: { value: string; onChange: (name: string) => void; maxLength: number; aria: ReturnType<typeof fieldAria> }) {
  return (
    <Field label="Name">
      <Input name="name" value={value} onChange={(input) => onChange(input.target.value)} autoComplete="off" maxLength={maxLength} className="max-w-sm" {...aria} />
    </Field>
  );
}
