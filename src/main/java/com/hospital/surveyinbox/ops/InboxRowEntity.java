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
@NamedQuery(name = "InboxRow.search", query = """
        SELECT r FROM InboxRowEntity r
         WHERE (:status IS NULL OR r.status = :status)
           AND (:srvyDrawupNo IS NULL OR r.srvyDrawupNo = :srvyDrawupNo)
         ORDER BY r.id DESC
        """)
@Table(name = "inbox_message")
public class InboxRowEntity {

    @Id
    private Long id;
    @Column(name = "srvy_drawup_no") private String srvyDrawupNo;
    @Column(name = "msg_type") private String msgType;
    private String status;
    private int attempts;
    @Column(name = "last_error") private String lastError;
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
    public String getHeldReason() { return heldReason; }
    public String getReplyStatus() { return replyStatus; }
    public String getReplyReasonCode() { return replyReasonCode; }
    public int getReplyAttempts() { return replyAttempts; }
    public String getReplyLastError() { return replyLastError; }
    public OffsetDateTime getCreatedAt() { return createdAt; }
    public OffsetDateTime getUpdatedAt() { return updatedAt; }
}
