package com.hospital.surveyinbox.processing;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The fields of a claimed message that {@code routes/inbox-register.camel.yaml} reads (as
 * {@code ${exchangeProperty.msg.…}}). Values that become URL path or query parts have an encoded
 * accessor, so the route never builds a URL from raw text.
 *
 * @param inboxId the row's id; above every stored id on the synchronous path (nothing stored)
 * @param notifyPatient false when {@code alimtalkYn=N}: create the questionnaire, send no notification
 * @param sendAt  {@code sendDt} as an ISO offset time in the legacy zone, or the time of processing
 */
public record Registration(long inboxId, String srvyDrawupNo, String msgType, String patno, String srvyNo,
                           String formCd, String groupCd, String patNm, String mobileNo, boolean notifyPatient,
                           String sendAt) {

    /** Named parameters of the statements the registration runs ({@code sql/has-completed-send.sql}). */
    public java.util.Map<String, Object> params() {
        return java.util.Map.of("id", inboxId, "srvyDrawupNo", srvyDrawupNo);
    }

    public String srvyDrawupNoSegment() {
        return encode(srvyDrawupNo);
    }

    public String patnoSegment() {
        return encode(patno);
    }

    public String srvyNoSegment() {
        return encode(srvyNo);
    }

    public String formCdSegment() {
        return encode(formCd);
    }

    public String groupCdSegment() {
        return encode(groupCd);
    }

    private static String encode(String value) {
        return value == null ? null : URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
