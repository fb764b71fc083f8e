package com.hospital.surveyinbox.ops;

import java.time.OffsetDateTime;

/** The operator's view of a row (CONTRACT §4): identifiers and state only, no payload, no patient data. */
public record InboxRowView(String inboxId, String srvyDrawupNo, String msgType, String status, int attempts,
                           String lastError, String heldReason, String replyStatus, String replyReasonCode,
                           int replyAttempts, String replyLastError, OffsetDateTime receivedAt,
                           OffsetDateTime updatedAt) {

    static InboxRowView of(InboxRowEntity row) {
        return new InboxRowView(Long.toString(row.getId()), row.getSrvyDrawupNo(), row.getMsgType(), row.getStatus(),
                row.getAttempts(), row.getLastError(), row.getHeldReason(), row.getReplyStatus(),
                row.getReplyReasonCode(), row.getReplyAttempts(), row.getReplyLastError(), row.getCreatedAt(),
                row.getUpdatedAt());
    }
}
