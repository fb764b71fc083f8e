package com.hospital.surveyinbox.ops;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.NamedQuery;
import jakarta.persistence.Table;
import java.time.OffsetDateTime;
import org.hibernate.annotations.Immutable;

/**
 * Read-only JPA view of an inbox row for operators. The payload column is deliberately not mapped:
 * operator reads can never expose patient data. All writes go through {@code InboxStore}'s conditional
 * UPDATEs, hence {@link Immutable}.
 */
@Entity
@Immutable
// The operator list's four shapes (routes/inbox-ops.camel.yaml picks one), newest first, each read through an
// index: a subject's rows (V10's inbox_message_subject_idx), one status (inbox_message_status_id_idx), one owed reply
// status (byReplyStatus, its partial index of owed replies), all (the key).
// :before is the page's cursor (the ids below it: the last inboxId of the page before, else the largest id there is).
@NamedQuery(name = "InboxRow.bySubject", query = """
        SELECT r FROM InboxRowEntity r
         WHERE r.srvyDrawupNo = :srvyDrawupNo AND (:status IS NULL OR r.status = :status)
           AND (:replyStatus IS NULL OR r.replyStatus = :replyStatus) AND r.id < :before
         ORDER BY r.id DESC
        """)
// the owed states written out: a pooled statement's generic plan cannot prove V1's partial index of owed replies
// from "reply_status = $1" alone, and would read every row ever answered (InboxReadsAtScaleTest)
@NamedQuery(name = "InboxRow.byReplyStatus", query = """
        SELECT r FROM InboxRowEntity r
         WHERE r.replyStatus IN ('PENDING', 'SENDING', 'FAILED') AND r.replyStatus = :replyStatus
           AND (:status IS NULL OR r.status = :status) AND r.id < :before
         ORDER BY r.id DESC
        """)
@NamedQuery(name = "InboxRow.byStatus",
        query = "SELECT r FROM InboxRowEntity r WHERE r.status = :status AND r.id < :before ORDER BY r.id DESC")
@NamedQuery(name = "InboxRow.newest", query = "SELECT r FROM InboxRowEntity r WHERE r.id < :before ORDER BY r.id DESC")
@Table(name = "inbox_message")
public class InboxRowEntity {

    @Id
    private Long id;
    @Column(name = "srvy_drawup_no") private String srvyDrawupNo;
    @Column(name = "msg_type") private String msgType;
    private String status;
    private int attempts;
    @Column(name = "last_error") private String lastError;
    @Column(name = "last_error_code") private String lastErrorCode;
    @Column(name = "held_reason") private String heldReason;
    @Column(name = "reply_status") private String replyStatus;
    @Column(name = "reply_reason_code") private String replyReasonCode;
    @Column(name = "reply_attempts") private int replyAttempts;
    @Column(name = "reply_last_error") private String replyLastError;
    @Column(name = "created_at") private OffsetDateTime createdAt;
    @Column(name = "updated_at") private OffsetDateTime updatedAt;

    public Long getId() { return id; }
    public String getSrvyDrawupNo() { return srvyDrawupNo; }
    public String getMsgType() { return msgType; }
    public String getStatus() { return status; }
    public int getAttempts() { return attempts; }
    public String getLastError() { return lastError; }
    public String getLastErrorCode() { return lastErrorCode; }
    public String getHeldReason() { return heldReason; }
    public String getReplyStatus() { return replyStatus; }
    public String getReplyReasonCode() { return replyReasonCode; }
    public int getReplyAttempts() { return replyAttempts; }
    public String getReplyLastError() { return replyLastError; }
    public OffsetDateTime getCreatedAt() { return createdAt; }
    public OffsetDateTime getUpdatedAt() { return updatedAt; }
}
