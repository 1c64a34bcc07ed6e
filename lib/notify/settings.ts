// The operator's notification defaults: the dead-letter threshold every district follows unless it set its own
// (tenant_contacts.dlq_threshold, lib/notify/contacts.ts). It lives in ops_settings, where the ops trigger reads it
// (migrations 0006, 0044). Global admins change it; every change is audited with its before and after.
import "server-only";
import type { PrismaClient } from "../db/prisma";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import { AppError } from "../errors";
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

/**
 * A dashboard form's threshold field as typed: a whole number (the use case checks its range); empty is null where
 * the field may be left empty (a district's own: the default applies), refused where it may not.
 */
export function dlqThresholdField(raw: unknown, opts: { optional: true }): number | null;
export function dlqThresholdField(raw: unknown, opts: { optional: false }): number;
export function dlqThresholdField(raw: unknown, opts: { optional: boolean }): number | null {
  const text = String(raw ?? "").trim();
  if (text === "" && opts.optional) return null;
  if (!/^\d+$/.test(text)) throw new AppError("validation_failed", `dlqThreshold: "${text.slice(0, 20)}" is not a whole number of dead letters.`);
  return Number(text);
}
