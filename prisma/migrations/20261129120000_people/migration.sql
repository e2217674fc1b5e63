-- CreateTable
CREATE TABLE "User" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "username" TEXT NOT NULL,
    "passwordHash" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "disabledAt" DATETIME
);

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "userId" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "endedAt" DATETIME,
    CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "HumanRevision" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "versionId" TEXT NOT NULL,
    "threadId" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "action" TEXT NOT NULL,
    "section" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "at" DATETIME NOT NULL,
    CONSTRAINT "HumanRevision_versionId_fkey" FOREIGN KEY ("versionId") REFERENCES "PacketVersion" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "User_username_key" ON "User"("username");

-- CreateIndex
CREATE INDEX "Session_userId_idx" ON "Session"("userId");

-- CreateIndex
CREATE INDEX "HumanRevision_threadId_idx" ON "HumanRevision"("threadId");

-- CreateIndex
CREATE UNIQUE INDEX "HumanRevision_versionId_revision_key" ON "HumanRevision"("versionId", "revision");


-- A human section's revisions are history: refuse changes at the database.
CREATE TRIGGER "HumanRevision_no_update" BEFORE UPDATE ON "HumanRevision"
BEGIN SELECT RAISE(ABORT, 'HumanRevision is append-only'); END;
CREATE TRIGGER "HumanRevision_no_delete" BEFORE DELETE ON "HumanRevision"
BEGIN SELECT RAISE(ABORT, 'HumanRevision is append-only'); END;
