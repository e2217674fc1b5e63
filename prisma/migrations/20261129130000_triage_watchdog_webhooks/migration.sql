-- AlterTable
ALTER TABLE "Thread" ADD COLUMN "lastSessionAt" DATETIME;
ALTER TABLE "Thread" ADD COLUMN "lastSessionKind" TEXT;
ALTER TABLE "Thread" ADD COLUMN "staleNotifiedFor" DATETIME;

-- CreateTable
CREATE TABLE "RiskTriage" (
    "threadId" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "snoozedUntil" DATETIME,
    "severityAtTriage" TEXT NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    "updatedBy" TEXT NOT NULL,

    PRIMARY KEY ("threadId", "fingerprint")
);

-- CreateTable
CREATE TABLE "FailedAttempt" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "versionId" TEXT NOT NULL,
    "threadId" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "attempt" TEXT NOT NULL,
    "reason" TEXT,
    "exitCode" INTEGER,
    "seenAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Webhook" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "events" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" DATETIME NOT NULL,
    "createdBy" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "webhookId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "threadKey" TEXT,
    "body" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "lockedUntil" DATETIME,
    "lastStatus" INTEGER,
    "lastError" TEXT,
    "createdAt" DATETIME NOT NULL,
    "deliveredAt" DATETIME
);

-- CreateTable
CREATE TABLE "WorkerCursor" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "seq" INTEGER NOT NULL
);

-- CreateIndex
CREATE INDEX "FailedAttempt_fingerprint_seenAt_idx" ON "FailedAttempt"("fingerprint", "seenAt");

-- CreateIndex
CREATE INDEX "FailedAttempt_seenAt_idx" ON "FailedAttempt"("seenAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_nextAttemptAt_idx" ON "WebhookDelivery"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_webhookId_event_threadKey_createdAt_idx" ON "WebhookDelivery"("webhookId", "event", "threadKey", "createdAt");

