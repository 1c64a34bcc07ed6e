// The demo's make-believe school system: districts, schools, students,
// assignments, and the events an edtech platform would publish about them.
// Deterministic rosters (a seeded PRNG) so a restarted demo talks about the
// same students; random choices per event so traffic looks alive.
import type { TCreateEvent } from "../lib/events/event-input";
import { rng } from "../lib/random"; // seeded: rosters are the same on every run

export type DistrictSlug = "lincoln" | "jefferson" | "riverside" | "maplegrove" | "cedarfalls" | "westfield" | "oakridge";

type Student = { id: string; name: string; grade: number };
type School = { id: string; name: string; students: Student[] };
export type Roster = { slug: DistrictSlug; schools: School[] };

// Weighted share of traffic per district: the healthy SIS gets the most, the
// decommissioned endpoint a trickle.
export const TRAFFIC_WEIGHTS: Record<DistrictSlug, number> = {
  lincoln: 24,
  jefferson: 16,
  riverside: 16,
  maplegrove: 14,
  cedarfalls: 12,
  oakridge: 12,
  westfield: 6,
};

const SCHOOLS: Record<DistrictSlug, string[]> = {
  lincoln: ["Lincoln High School", "Douglass Middle School", "Garfield Elementary"],
  jefferson: ["Jefferson County High", "Monroe Middle School", "Adams Elementary"],
  riverside: ["Riverside High School", "Bluff Road Middle School"],
  maplegrove: ["Maple Grove Senior High", "Maple Grove Junior High", "Weaver Lake Elementary"],
  cedarfalls: ["Cedar Falls High School", "Holmes Junior High"],
  westfield: ["Westfield Academy"],
  oakridge: ["Oak Ridge High School", "Robertsville Middle School", "Willow Brook Elementary"],
};

// A few surnames carry an apostrophe on purpose: the legacy PHP handler
// builds its SQL by string concatenation and chokes on them.
const FIRST = [
  "Ava",
  "Liam",
  "Sofia",
  "Noah",
  "Maya",
  "Ethan",
  "Zoe",
  "Mateo",
  "Isla",
  "Omar",
  "Priya",
  "Lucas",
  "Amara",
  "Leo",
  "Hana",
  "Diego",
  "Chloe",
  "Kwame",
  "Nora",
  "Ravi",
  "Elena",
  "Jamal",
  "Grace",
  "Tomás",
];
const LAST = [
  "Johnson",
  "Nguyen",
  "Garcia",
  "Patel",
  "Okafor",
  "Smith",
  "Kim",
  "Martinez",
  "O'Brien",
  "Chen",
  "Williams",
  "D'Angelo",
  "Haddad",
  "Brown",
  "Rossi",
  "Kowalski",
  "O'Neill",
  "Singh",
  "Lopez",
  "Andersen",
];

const ASSIGNMENTS = [
  { id: "asg_101", title: "Unit 3 Quiz: Fractions", course: "Math 6", max: 20 },
  { id: "asg_102", title: "Lab Report: Photosynthesis", course: "Biology", max: 50 },
  { id: "asg_103", title: "Essay: The Giver", course: "English 8", max: 100 },
  { id: "asg_104", title: "Chapter 5 Test: Linear Equations", course: "Algebra I", max: 100 },
  { id: "asg_105", title: "Map Project: Westward Expansion", course: "US History", max: 40 },
  { id: "asg_106", title: "Vocabulary Quiz 7", course: "Spanish I", max: 25 },
  { id: "asg_107", title: "Assignment 7: Reading Log", course: "ELA 4", max: 10 },
  { id: "asg_108", title: "Problem Set 9: Kinematics", course: "Physics", max: 30 },
  { id: "asg_109", title: "Unit Test: Cell Division", course: "Life Science", max: 60 },
  { id: "asg_110", title: "Persuasive Speech", course: "Speech & Debate", max: 50 },
];

const CURRENT_TERM = "fall-2026";

export function buildRoster(slug: DistrictSlug, studentsPerSchool = 40): Roster {
  const rnd = rng([...slug].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7));
  const prefix = slug.slice(0, 3);
  let n = 1000;
  const schools = SCHOOLS[slug].map((name, i) => ({
    id: `sch_${prefix}_${i + 1}`,
    name,
    students: Array.from({ length: studentsPerSchool }, () => ({
      id: `stu_${prefix}${n++}`,
      name: `${FIRST[Math.floor(rnd() * FIRST.length)]} ${LAST[Math.floor(rnd() * LAST.length)]}`,
      grade: 1 + Math.floor(rnd() * 12),
    })),
  }));
  return { slug, schools };
}

const pick = <T>(xs: readonly T[], rnd = Math.random): T => xs[Math.floor(rnd() * xs.length)];

export function pickWeighted<K extends string>(weights: Record<K, number>, rnd = Math.random): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((s, [, w]) => s + w, 0);
  let r = rnd() * total;
  for (const [k, w] of entries) {
    if ((r -= w) < 0) return k;
  }
  return entries[entries.length - 1][0];
}

function letter(pct: number): string {
  return pct >= 90 ? "A" : pct >= 80 ? "B" : pct >= 70 ? "C" : pct >= 60 ? "D" : "F";
}

export type GenerateOptions = {
  /** Share of assignment.graded events that omit term_id (graded outside a grading term). */
  missingTermIdRate: number;
};

/**
 * One event for a district: mostly assignment.graded, some attendance and
 * roster changes. `seq` makes the id unique within the run; `runId` across runs.
 */
export function generateEvent(roster: Roster, runId: string, seq: number, opts: GenerateOptions, rnd = Math.random): TCreateEvent {
  const school = pick(roster.schools, rnd);
  const student = pick(school.students, rnd);
  const id = `evt_${runId}_${String(seq).padStart(6, "0")}`;
  const kind = rnd();
  if (kind < 0.72) {
    const a = pick(ASSIGNMENTS, rnd);
    // Scores cluster around a B with a tail of low ones.
    const pct = Math.max(0, Math.min(1, 0.82 + (rnd() + rnd() + rnd() - 1.5) * 0.3));
    const score = Math.round(pct * a.max * 2) / 2;
    const withTerm = rnd() >= opts.missingTermIdRate;
    const data: Record<string, unknown> = {
      studentId: student.id,
      studentName: student.name,
      gradeLevel: student.grade,
      schoolId: school.id,
      school: school.name,
      assignmentId: a.id,
      assignmentTitle: a.title,
      course: a.course,
      score,
      maxScore: a.max,
      letterGrade: letter(score / a.max),
      gradedAt: new Date().toISOString(),
    };
    if (withTerm) data.term_id = CURRENT_TERM;
    const subject: Record<string, string | number> = {
      tenant: roster.slug,
      school: school.id,
      studentId: student.id,
      assignmentId: a.id,
      score,
    };
    if (withTerm) subject.term_id = CURRENT_TERM;
    return { id, type: "assignment.graded", data, subject };
  }
  if (kind < 0.9) {
    const status = pick(["present", "present", "present", "present", "tardy", "absent", "excused"] as const, rnd);
    return {
      id,
      type: "attendance.recorded",
      data: {
        studentId: student.id,
        studentName: student.name,
        schoolId: school.id,
        date: new Date().toISOString().slice(0, 10),
        period: 1 + Math.floor(rnd() * 7),
        status,
        term_id: CURRENT_TERM,
      },
      subject: { tenant: roster.slug, school: school.id, studentId: student.id, term_id: CURRENT_TERM },
    };
  }
  const a = pick(ASSIGNMENTS, rnd);
  const sectionId = `sec_${school.id.slice(4)}_${a.course.replace(/[^A-Za-z0-9]/g, "").toLowerCase()}`;
  const change = rnd() < 0.7 ? "added" : "removed";
  return {
    id,
    type: "roster.updated",
    data: {
      schoolId: school.id,
      school: school.name,
      sectionId,
      course: a.course,
      [change]: [{ studentId: student.id, studentName: student.name }],
      term_id: CURRENT_TERM,
    },
    subject: { tenant: roster.slug, school: school.id, studentId: student.id, sectionId, term_id: CURRENT_TERM },
  };
}
