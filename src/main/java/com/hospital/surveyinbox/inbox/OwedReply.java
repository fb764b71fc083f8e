package com.hospital.surveyinbox.inbox;

/** A reply to the legacy system that this sender now holds (reply_status = SENDING). */
public record OwedReply(long inboxId, String srvyDrawupNo, ReplyReason reasonCode, String reason) {
}
