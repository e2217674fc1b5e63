import { deliveryRoute } from "@/lib/integrations/request";

export const POST = deliveryRoute("gitlab", "GitLab", {
  "X-Gitlab-Token": "the integration's secret",
  "X-Gitlab-Event-UUID": "the delivery id (or Idempotency-Key); a second delivery with the same id changes nothing",
  "X-Gitlab-Event": "Merge Request Hook, Pipeline Hook or Note Hook (others are ignored)",
});
