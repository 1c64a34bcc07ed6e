// The traffic generator: a steady stream of events from the "edtech platform",
// published the way a producer would. `hookledger start --demo` publishes over
// HTTP with the typed client (@hookledger/client) and a producer token, so the
// demo exercises the route producers use; tests without a dashboard publish
// through the library (publishEvent in its own transaction). Event ids carry
// the run id, so a restarted demo never collides with the ids of an earlier run.
import type { PrismaClient } from "../lib/db/prisma";
import { publishEventStandalone } from "../lib/events/publish";
import type { TCreateEvent } from "../lib/events/event-input";
import type { HookledgerClient } from "../client/src/index";
import { buildRoster, generateEvent, pickWeighted, TRAFFIC_WEIGHTS, type DistrictSlug, type Roster } from "./catalog";

export type PublishedSample = {
  at: string;
  eventId: string;
  type: string;
  tenant: string;
  studentId?: string;
  studentName?: string;
  school?: string;
  assignmentId?: string;
  assignmentTitle?: string;
  hasTermId: boolean;
};

export type TrafficOptions = {
  eventsPerSecond: number;
  /** Share of assignment.graded events with no term_id (the strict importer rejects them). */
  missingTermIdRate: number;
  weights?: Partial<Record<DistrictSlug, number>>;
};

export class Traffic {
  eventsPerSecond: number;
  paused = false;
  published = 0;
  errors = 0;
  lastError?: string;
  readonly recent: PublishedSample[] = [];
  /** Grades that will not reach their district until someone acts: material for a support ticket. */
  readonly ticketable: PublishedSample[] = [];
  readonly runId: string;
  private seq = 0;
  private timer?: NodeJS.Timeout;
  private inFlight?: Promise<void>;
  private stopped = false;
  private rosters: Map<DistrictSlug, Roster>;
  private weights: Record<DistrictSlug, number>;
  private lastErrorLog = 0;

  private publishEvent: (event: TCreateEvent) => Promise<unknown>;

  constructor(
    via: { client: HookledgerClient } | { prisma: PrismaClient },
    private opts: TrafficOptions,
    private log: (line: string) => void,
  ) {
    this.publishEvent = "client" in via ? (event) => via.client.publish(event) : (event) => publishEventStandalone(via.prisma, event);
    this.eventsPerSecond = opts.eventsPerSecond;
    // Base-36 milliseconds: short, sortable, and unique per run.
    this.runId = Date.now().toString(36);
    this.weights = { ...TRAFFIC_WEIGHTS, ...(opts.weights ?? {}) };
    this.rosters = new Map((Object.keys(TRAFFIC_WEIGHTS) as DistrictSlug[]).map((s) => [s, buildRoster(s)]));
  }

  start() {
    this.schedule(0);
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // Ctrl-C reaches the dashboard too: a publish in flight may be retrying against a server that is
    // gone (the client backs off for seconds), and a demo event may be lost. Waited for briefly only.
    await Promise.race([this.inFlight, new Promise((r) => setTimeout(r, 250).unref())]);
  }

  /** Publishes one event now (the loop calls this; tests may too). */
  async publishOne(slug?: DistrictSlug): Promise<string | null> {
    const district = slug ?? pickWeighted(this.weights);
    const ev = generateEvent(this.rosters.get(district)!, this.runId, ++this.seq, { missingTermIdRate: this.opts.missingTermIdRate });
    try {
      await this.publishEvent(ev);
      this.published++;
      const d = ev.data as Record<string, unknown>;
      const sample: PublishedSample = {
        at: new Date().toISOString(),
        eventId: ev.id,
        type: ev.type,
        tenant: district,
        studentId: d.studentId as string | undefined,
        studentName: d.studentName as string | undefined,
        school: d.school as string | undefined,
        assignmentId: d.assignmentId as string | undefined,
        assignmentTitle: d.assignmentTitle as string | undefined,
        hasTermId: typeof d.term_id === "string",
      };
      this.recent.push(sample);
      if (this.recent.length > 30) this.recent.shift();
      // Jefferson's PHP handler always fails on an apostrophe; Maple Grove rejects a grade without term_id.
      if (ev.type === "assignment.graded" && ((district === "jefferson" && sample.studentName?.includes("'")) || (district === "maplegrove" && !sample.hasTermId))) {
        this.ticketable.push(sample);
        if (this.ticketable.length > 5) this.ticketable.shift();
      }
      return ev.id;
    } catch (err) {
      if (this.stopped) return null;
      this.errors++;
      this.lastError = (err as Error).message;
      if (Date.now() - this.lastErrorLog > 30_000) {
        this.lastErrorLog = Date.now();
        this.log(`Demo traffic: publishing failed (${this.lastError}); retrying with the next event.`);
      }
      return null;
    }
  }

  private schedule(delayMs: number) {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const began = Date.now();
      if (this.paused || this.eventsPerSecond <= 0) return this.schedule(500);
      this.inFlight = this.publishOne().then(() => {
        // Exponential gaps (a Poisson process) look like real traffic, not a metronome.
        const mean = 1000 / this.eventsPerSecond;
        const gap = Math.min(mean * 4, -Math.log(1 - Math.random()) * mean);
        this.schedule(Math.max(0, gap - (Date.now() - began)));
      });
    }, delayMs);
  }
}
