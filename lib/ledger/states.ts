export const DELIVERY_STATES = ["pending", "in_flight", "scheduled", "delivered", "dead_letter"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** States the claim query picks up once `next_attempt_at` has passed. */
export const DUE_STATES: DeliveryState[] = ["pending", "scheduled"];
export const TERMINAL_STATES: DeliveryState[] = ["delivered", "dead_letter"];

export const SUBSCRIPTION_STATES = ["active", "paused", "disabled"] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

export const ATTEMPT_TRIGGERS = ["scheduled", "redrive", "manual"] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];
