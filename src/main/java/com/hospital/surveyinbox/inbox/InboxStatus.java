package com.hospital.surveyinbox.inbox;

/** Lifecycle of an inbox row (CONTRACT §2). */
public enum InboxStatus {
    /** Stored and acknowledged; its event is (or will be) on the topic. */
    RECEIVED,
    /** Claimed by exactly one worker, which holds the claim token. */
    PROCESSING,
    /** Registered downstream; terminal. */
    COMPLETED,
    /** An attempt failed; the redelivery job republishes it after the retry delay. */
    FAILED,
    /** The attempt that reached max-attempts failed; terminal until an operator requeues it. */
    DEAD;

    /** Rows that still owe work, and so block later rows of the same subject. */
    public static final String UNFINISHED_SQL = "('RECEIVED', 'PROCESSING', 'FAILED')";
}
