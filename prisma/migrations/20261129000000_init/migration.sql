-- CreateTable
CREATE TABLE "Thread" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "key" TEXT NOT NULL,
    "archived" BOOLEAN NOT NULL DEFAULT false,
    "activeVersionId" TEXT,
    "activeSortAt" DATETIME,
    "activeReceivedAt" DATETIME,
    "agent" TEXT,
    "project" TEXT,
    "branch" TEXT,
    "topic" TEXT,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Thread_activeVersionId_fkey" FOREIGN KEY ("activeVersionId") REFERENCES "PacketVersion" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PacketVersion" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "threadId" TEXT NOT NULL,
    "contentHash" TEXT NOT NULL,
    "receivedJson" TEXT NOT NULL,
    "canonicalJson" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "sourcePath" TEXT,
    "workspaceRoot" TEXT,
    "producerCreatedAt" DATETIME,
    "receivedAt" DATETIME NOT NULL,
    "sortAt" DATETIME NOT NULL,
    "flags" TEXT NOT NULL,
    "nextAction" TEXT,
    "highestSeverity" TEXT,
    "riskCounts" TEXT NOT NULL,
    "questionCount" INTEGER NOT NULL,
    "summary" TEXT,
    "agent" TEXT,
    "project" TEXT,
    "branch" TEXT,
    "topic" TEXT,
    "taskId" TEXT,
    "sessionId" TEXT,
    CONSTRAINT "PacketVersion_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Risk" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "versionId" TEXT NOT NULL,
    "threadId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "riskId" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "severityRaw" TEXT,
    "detail" TEXT NOT NULL,
    "mitigation" TEXT,
    "fingerprint" TEXT NOT NULL,
    CONSTRAINT "Risk_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "PacketVersion" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Risk_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "AgentQuestion" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "versionId" TEXT NOT NULL,
    "threadId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "questionId" TEXT NOT NULL,
    "question" TEXT NOT NULL,
    "context" TEXT,
    "options" TEXT NOT NULL,
    "blocking" BOOLEAN NOT NULL,
    CONSTRAINT "AgentQuestion_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "PacketVersion" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "AgentQuestion_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "LedgerEvent" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "at" DATETIME NOT NULL,
    "kind" TEXT NOT NULL,
    "threadKey" TEXT,
    "versionId" TEXT,
    "actor" TEXT NOT NULL,
    "data" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "scopes" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "lastUsedAt" DATETIME,
    "revokedAt" DATETIME
);

-- CreateTable
CREATE TABLE "IdempotencyRecord" (
    "tokenId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "bodyHash" TEXT NOT NULL,
    "packetId" TEXT,
    "createdAt" DATETIME NOT NULL,

    PRIMARY KEY ("tokenId", "key")
);

-- CreateIndex
CREATE UNIQUE INDEX "Thread_key_key" ON "Thread"("key");

-- CreateIndex
CREATE UNIQUE INDEX "Thread_activeVersionId_key" ON "Thread"("activeVersionId");

-- CreateIndex
CREATE INDEX "Thread_archived_updatedAt_idx" ON "Thread"("archived", "updatedAt");

-- CreateIndex
CREATE UNIQUE INDEX "PacketVersion_contentHash_key" ON "PacketVersion"("contentHash");

-- CreateIndex
CREATE INDEX "PacketVersion_threadId_sortAt_idx" ON "PacketVersion"("threadId", "sortAt");

-- CreateIndex
CREATE INDEX "Risk_versionId_idx" ON "Risk"("versionId");

-- CreateIndex
CREATE INDEX "Risk_fingerprint_idx" ON "Risk"("fingerprint");

-- CreateIndex
CREATE INDEX "Risk_threadId_fingerprint_idx" ON "Risk"("threadId", "fingerprint");

-- CreateIndex
CREATE INDEX "AgentQuestion_versionId_idx" ON "AgentQuestion"("versionId");

-- CreateIndex
CREATE INDEX "AgentQuestion_threadId_idx" ON "AgentQuestion"("threadId");

-- CreateIndex
CREATE INDEX "LedgerEvent_threadKey_seq_idx" ON "LedgerEvent"("threadKey", "seq");

-- CreateIndex
CREATE INDEX "LedgerEvent_kind_seq_idx" ON "LedgerEvent"("kind", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_prefix_key" ON "ApiToken"("prefix");


-- The ledger is append-only and stored versions are immutable: refuse changes
-- at the database, whatever code path tries them.
CREATE TRIGGER "LedgerEvent_no_update" BEFORE UPDATE ON "LedgerEvent"
BEGIN SELECT RAISE(ABORT, 'LedgerEvent is append-only'); END;
CREATE TRIGGER "LedgerEvent_no_delete" BEFORE DELETE ON "LedgerEvent"
BEGIN SELECT RAISE(ABORT, 'LedgerEvent is append-only'); END;
CREATE TRIGGER "PacketVersion_no_update" BEFORE UPDATE ON "PacketVersion"
BEGIN SELECT RAISE(ABORT, 'PacketVersion is immutable'); END;
CREATE TRIGGER "PacketVersion_no_delete" BEFORE DELETE ON "PacketVersion"
BEGIN SELECT RAISE(ABORT, 'PacketVersion is immutable'); END;
