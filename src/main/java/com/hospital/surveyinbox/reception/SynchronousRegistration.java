package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.inbox.ReplyReason;
import com.hospital.surveyinbox.processing.BusinessException;
import com.hospital.surveyinbox.processing.DownstreamCircuits;
import com.hospital.surveyinbox.processing.Outcome;
import com.hospital.surveyinbox.processing.RegistrationFlow;
import com.hospital.surveyinbox.processing.SystemException;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The old synchronous path, behind the rollback toggle ({@code routes/inbox-receive.camel.yaml}, step
 * {@code inbox-receive-register-synchronously}): the same registration flow as the consumer, answered
 * in the response — 200 Y registered, 200 N with the business reason, 503 N when a downstream is down
 * (nothing was acknowledged, so the sender retries). Nothing is stored.
 */
@Component("synchronousRegistration")
public class SynchronousRegistration {

    private static final Logger log = LoggerFactory.getLogger(SynchronousRegistration.class);
    /** Sorts after every stored row, so resend detection sees every completed SEND of the inbox. */
    private static final long NOT_STORED = Long.MAX_VALUE;

    private final RegistrationFlow flow;
    private final ReceptionReplies replies;
    private final DownstreamCircuits circuits;

    public SynchronousRegistration(RegistrationFlow flow, ReceptionReplies replies, DownstreamCircuits circuits) {
        this.flow = flow;
        this.replies = replies;
        this.circuits = circuits;
    }

    public void register(Exchange exchange) {
        ReceivedMessage message = exchange.getMessage().getBody(ReceivedMessage.class);
        ClaimedRow row = new ClaimedRow(NOT_STORED, message.srvyDrawupNo(), message.msgType(), message.payload(), 1, null);
        String open = circuits.firstOpen(DownstreamCircuits.needs(message.msgType()));
        if (open != null) {
            replies.write(exchange, 503, "N", open + " unavailable; nothing registered, please retry", null);
            return;
        }
        try {
            Outcome outcome = flow.register(row);
            if (outcome.reply() == ReplyReason.ALREADY_SUBMITTED) {
                replies.synchronousOutcome(exchange, false, outcome.replyReason());
            } else if (outcome.reply() == ReplyReason.NOTIFY_SKIPPED) {
                replies.write(exchange, 200, "Y", outcome.replyReason(), null);
            } else {
                replies.synchronousOutcome(exchange, true, null);
            }
        } catch (BusinessException e) {
            replies.synchronousOutcome(exchange, false, e.getMessage());
        } catch (SystemException e) {
            log.warn("Synchronous registration failed at {}; answering 503", e.downstream());
            replies.write(exchange, 503, "N", "downstream unavailable; nothing registered, please retry", null);
        }
    }
}
