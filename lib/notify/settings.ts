// The operator's notification defaults: the dead-letter threshold every district follows unless it set its own
// (tenant_contacts.dlq_threshold, lib/notify/contacts.ts). It lives in ops_settings, where the ops trigger reads it
// (migrations 0006, 0044). Global admins change it; every change is audited with its before and after.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { ZNotificationSettings, type TNotificationSettings } from "./input";

export type NotificationSettingsView = { dlqThreshold: number };

/** ops_settings' column default (migration 0006), for a database whose one row is missing. */
const DEFAULT_DLQ_THRESHOLD = 100;

export async function getNotificationSettings(prisma: PrismaClient): Promise<NotificationSettingsView> {
  const row = await prisma.opsSettings.findFirst({ select: { dlqThreshold: true } });
  return { dlqThreshold: row?.dlqThreshold ?? DEFAULT_DLQ_THRESHOLD };
}

/** Sets the defaults; audited as notifications.settings.update in the same transaction. The same value again writes nothing. */
export async function setNotificationSettings(prisma: PrismaClient, input: TNotificationSettings, principal: Principal): Promise<NotificationSettingsView> {
  const v = ZNotificationSettings.parse(input);
  return prisma.$transaction(async (tx) => {
    // One row (id true); FOR UPDATE so two admins' changes are audited in the order they landed.
    const [row] = await tx.$queryRaw<{ dlq_threshold: number }[]>`SELECT dlq_threshold FROM ops_settings WHERE id FOR UPDATE`;
    const from = row?.dlq_threshold ?? DEFAULT_DLQ_THRESHOLD;
    if (from === v.dlqThreshold) return { dlqThreshold: from };
    await tx.opsSettings.upsert({ where: { id: true }, create: { id: true, dlqThreshold: v.dlqThreshold }, update: { dlqThreshold: v.dlqThreshold } });
    await writeAudit(tx, {
      actor: principal.actor,
      action: "notifications.settings.update",
      targetType: "settings",
      targetId: "notifications",
      details: { dlqThreshold: { from, to: v.dlqThreshold } },
      tenantId: null,
    });
    return { dlqThreshold: v.dlqThreshold };
  });
}
