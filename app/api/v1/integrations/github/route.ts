import { deliveryRoute } from "@/lib/integrations/request";

export const POST = deliveryRoute("github", "GitHub", {
  "X-Hub-Signature-256": "sha256=<hex HMAC-SHA256 of the raw body with the integration's secret>",
  "X-GitHub-Delivery": "the delivery id; a second delivery with the same id changes nothing",
  "X-GitHub-Event": "pull_request, check_run, check_suite or pull_request_review (others are ignored)",
});
