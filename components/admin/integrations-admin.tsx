"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { localProblem } from "@/lib/browser/problem";
import { sendJson } from "@/lib/browser/send-json";
import { CODE_HOSTS, createdIntegrationDto, INTEGRATION_NAME_MAX, type CodeHost, type IntegrationListDto } from "@/lib/integrations/dto";
import { AgentText } from "@/components/ui/agent-text";
import { SubmitButton } from "@/components/ui/button";
import { ChoiceSelect, Field } from "@/components/ui/field";
import { FormPanel, useFormProblem } from "@/components/ui/form-panel";
import { Panel } from "@/components/ui/panel";
import { When } from "@/components/ui/time";
import { NameField } from "./name-field";
import { ShownOnce } from "./shown-once";

const HOST_LABELS: Record<CodeHost, string> = { github: "GitHub", gitlab: "GitLab" };
const LABELS = { name: "Name", host: "Code host" };

/** Creates a code host integration (its secret shown once), lists them and the deliveries no thread matched. */
/** `now` (ms): when the page read `list`; ages are measured from it. */
export function IntegrationsAdmin({ list, now }: { list: IntegrationListDto; now: number }) {
  const router = useRouter();
  const form = useFormProblem(LABELS);
  const [name, setName] = useState("");
  const [host, setHost] = useState<CodeHost>("github");
  const [sending, setSending] = useState(false);
  const [created, setCreated] = useState<{ name: string; secret: string; endpoint: string } | null>(null);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!name.trim()) return form.setProblem(localProblem(["name"], "Name: give the integration a name, such as the organisation it serves."));
    setSending(true);
    const answer = await form.send(() => sendJson("POST", "/api/v1/integrations", { name, host }, createdIntegrationDto), "Adding the integration failed.");
    setSending(false);
    if (!answer) return;
    setCreated({ name: answer.integration.name, secret: answer.secret, endpoint: answer.integration.endpoint });
    setName("");
    router.refresh();
  }

  const notice = created ? (
    <ShownOnce
      label={`Webhook secret for ${created.name}`}
      note={
        <>
          Shown once: paste it as the webhook&apos;s secret in the code host, with the payload URL <code className="break-all">{created.endpoint}</code>{" "}
          (docs/integrations.md, Code hosts).
        </>
      }
      secret={created.secret}
      what="secret"
      onDone={() => setCreated(null)}
    />
  ) : null;
  return (
    <>
      <FormPanel form={form} title="Add a code host" notice={notice} onSubmit={submit}>
        <NameField value={name} onChange={setName} maxLength={INTEGRATION_NAME_MAX} aria={form.aria("name")} />
        <Field label="Code host">
          <ChoiceSelect name="host" value={host} choices={CODE_HOSTS} labels={HOST_LABELS} onChoose={setHost} className="max-w-xs" {...form.aria("host")} />
        </Field>
        <div>
          <SubmitButton pending={sending}>Add integration</SubmitButton>
        </div>
      </FormPanel>
      <Panel headingId={`${form.id}-list`} title="Integrations">
        {list.integrations.length === 0 ? (
          <p className="text-sm text-muted">No integrations yet. Add one to see pull requests, CI and reviews on the cards.</p>
        ) : (
          <ul className="flex flex-col gap-2 text-sm">
            {list.integrations.map((integration) => (
              <li key={integration.id} data-testid="integration">
                <span className="font-semibold">{integration.name}</span> · {HOST_LABELS[integration.host]} · secret {integration.secret_hint} ·{" "}
                <code className="break-all text-xs">{integration.endpoint}</code>
              </li>
            ))}
          </ul>
        )}
      </Panel>
      <Panel headingId={`${form.id}-unmatched`} title="Deliveries no thread matched">
        {list.unmatched.length === 0 ? (
          <p className="text-sm text-muted">None: every delivery found an active thread with its project and branch.</p>
        ) : (
          <ul className="flex flex-col gap-1 text-sm" data-testid="unmatched-deliveries">
            {list.unmatched.map((delivery) => (
              <li key={`${delivery.integration_id}/${delivery.delivery_id}`}>
                {delivery.event.replace("_", " ")} on <AgentText className="font-mono" text={delivery.repository ?? "?"} /> branch{" "}
                <AgentText className="font-mono" text={delivery.branch ?? "?"} /> · <When iso={delivery.received_at} now={now} />
              </li>
            ))}
          </ul>
        )}
      </Panel>
    </>
  );
}
