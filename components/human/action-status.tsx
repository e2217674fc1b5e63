import type { HumanStateDto } from "@/lib/human/dto";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import { describeHumanSection } from "./human-state-line";
import type { ActionStatus } from "./use-human-action";

/**
 * Under a human action's controls: why it failed, or (refused because the thread moved on)
 * the state now and a button that acts on it. With `packetId`, the packet the person acted
 * on, it also says when a newer packet arrived.
 */
export function ActionStatusAlert({
  status,
  packetId,
  actLabel,
  actClassName,
  onAct,
}: {
  status: ActionStatus;
  packetId?: string;
  actLabel: string;
  actClassName: string;
  onAct: (current: HumanStateDto) => void;
}) {
  if (status.state === "error") return <Alert size="compact">{status.message}</Alert>;
  if (status.state !== "conflict") return null;
  const { current } = status;
  return (
    <Alert tone="warning" size="compact" className="space-y-1">
      <p>{status.message}</p>
      {current ? (
        <>
          <p>
            Now: {packetId === undefined || current.packet_id === packetId ? "" : "a newer packet arrived; "}
            {describeHumanSection(current.human)}
          </p>
          <Button variant="small" className={actClassName} onClick={() => onAct(current)}>
            {actLabel}
          </Button>
        </>
      ) : null}
    </Alert>
  );
}
