package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.inbox.ReplyReason;
import com.hospital.surveyinbox.processing.Outcome;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangeProperty;
import org.springframework.stereotype.Component;

/**
 * The old synchronous path, behind the rollback toggle ({@code routes/inbox-receive.camel.yaml}, branch
 * {@code inbox-receive-when-synchronous}): the message runs through the same {@code inbox-register}
 * route as the consumer's rows, and its outcome is the answer — 200 Y registered, 200 N with the
 * business reason, 503 N when a downstream is down (nothing was acknowledged, so the sender retries).
 * Nothing is stored.
 */
@Component("synchronousRegistration")
public class SynchronousRegistration {

    /** Sorts after every stored row, so resend detection sees every completed SEND of the inbox. */
    private static final long NOT_STORED = Long.MAX_VALUE;

    private final ReceptionReplies replies;

    public SynchronousRegistration(ReceptionReplies replies) {
        this.replies = replies;
    }

    /** The received message as the row the registration route reads. */
    public ClaimedRow row(ReceivedMessage message) {
        return new ClaimedRow(NOT_STORED, message.srvyDrawupNo(), message.msgType(), message.payload(), 1, null);
    }

    /** Answers the sender with the registration's outcome. */
    public void answer(@ExchangeProperty("outcome") Outcome outcome, Exchange exchange) {
        if (outcome.deferred()) {
            replies.write(exchange, 503, "N", outcome.failedDownstream() + " unavailable; nothing registered, please retry", null);
        } else if (!outcome.success() && Outcome.SYSTEM_ERROR.equals(outcome.failureReason())) {
            replies.write(exchange, 503, "N", "downstream unavailable; nothing registered, please retry", null);
        } else if (!outcome.success()) {
            replies.synchronousOutcome(exchange, false, outcome.failureReason());
        } else if (outcome.reply() == ReplyReason.ALREADY_SUBMITTED) {
            replies.synchronousOutcome(exchange, false, outcome.replyReason());
        } else if (outcome.reply() == ReplyReason.NOTIFY_SKIPPED) {
            replies.write(exchange, 200, "Y", outcome.replyReason(), null);
        } else {
            replies.synchronousOutcome(exchange, true, null);
        }
    }
}
