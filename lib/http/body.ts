import { BatonError } from "../errors";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function assertJsonContentType(request: Request): void {
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    throw new BatonError(
      "unsupported_media_type",
      `Send the packet as JSON with Content-Type: application/json (got ${type ? `"${type.slice(0, 100)}"` : "none"}).`,
    );
  }
}

function tooLarge(limit: number): BatonError {
  return new BatonError("payload_too_large", `The body is larger than ${limit} bytes.`, { limit_bytes: limit });
}

/**
 * Reads the body as UTF-8 text, counting bytes as they arrive, whatever
 * Content-Length says; stops reading (and cancels the stream) past `limit`.
 */
export async function readBodyText(request: Request, limit: number): Promise<{ text: string; bytes: number }> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > limit) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(limit);
      }
      chunks.push(value);
    }
  }
  const buffer = Buffer.concat(chunks, bytes);
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(buffer), bytes };
  } catch {
    throw new BatonError("invalid_encoding", "The body is not valid UTF-8; send JSON encoded as UTF-8.");
  }
}
