package com.hospital.surveyinbox.ops;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * The operator's view of a row (CONTRACT §4): identifiers and state only, no payload, no patient data.
 * The detail adds the attempt history and the operator audit trail.
 */
public record InboxRowView(String inboxId, String srvyDrawupNo, String msgType, String status, int attempts,
                           String lastError, String lastErrorCode, String heldReason, String replyStatus, String replyReasonCode,
                           int replyAttempts, String replyLastError, OffsetDateTime receivedAt,
                           OffsetDateTime updatedAt,
                           @JsonInclude(JsonInclude.Include.NON_NULL) List<InboxHistory.AttemptView> attemptHistory,
                           @JsonInclude(JsonInclude.Include.NON_NULL) Long attemptHistoryOmitted,
                           @JsonInclude(JsonInclude.Include.NON_NULL) List<InboxHistory.AuditView> audit,
                           @JsonInclude(JsonInclude.Include.NON_NULL) Long auditOmitted) {

    static InboxRowView of(InboxRowEntity row) {
        return new InboxRowView(Long.toString(row.getId()), row.getSrvyDrawupNo(), row.getMsgType(), row.getStatus(),
                row.getAttempts(), shapesMasked(row.getLastError()), row.getLastErrorCode(), row.getHeldReason(), row.getReplyStatus(),
                row.getReplyReasonCode(), row.getReplyAttempts(), row.getReplyLastError(), row.getCreatedAt(),
                row.getUpdatedAt(), null, null, null, null);
    }

    /**
     * The detail: the row, its latest attempts ({@code attemptHistoryOmitted}: earlier ones left out, when any) and its
     * latest audit entries ({@code auditOmitted} likewise).
     */
    static InboxRowView of(InboxRowEntity row, InboxHistory.Attempts attempts, InboxHistory.Audit audit) {
        return new InboxRowView(Long.toString(row.getId()), row.getSrvyDrawupNo(), row.getMsgType(), row.getStatus(),
                row.getAttempts(), shapesMasked(row.getLastError()), row.getLastErrorCode(), row.getHeldReason(), row.getReplyStatus(),
                row.getReplyReasonCode(), row.getReplyAttempts(), row.getReplyLastError(), row.getCreatedAt(),
                row.getUpdatedAt(), attempts.shown(), attempts.omitted() > 0 ? attempts.omitted() : null, audit.shown(),
                audit.omitted() > 0 ? audit.omitted() : null);
    }

    /**
     * Shapes of personal data (phones, resident numbers, e-mail, dates) masked once more as the text is shown:
     * rows stored before the masking learnt a wording keep their text, and an operator must not see it. The
     * row's own values were masked when the text was stored ({@code PatientDataMask}).
     */
    static String shapesMasked(String text) {
        return com.hospital.surveyinbox.processing.PatientDataMask.mask(text, List.of());
    }
}
