package com.hospital.surveyinbox.inbox;

/** The row's obligation to reply to the legacy system (CONTRACT §3, "Reply to the legacy system"). */
public enum ReplyStatus {
    /** No reply is owed. */
    NONE,
    /** A reply is owed and not yet attempted. */
    PENDING,
    /** One sender holds the reply right now. */
    SENDING,
    /** Delivered; never sent again. */
    SENT,
    /** The last delivery attempt failed; the redelivery job tries again. */
    FAILED
}
