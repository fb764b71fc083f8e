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

    /**
     * The bundle's {@code Idempotency-Key} header (CONTRACT §3): the {@code srvyDrawupNo} as it is when it is
     * printable ASCII, else percent-encoded as UTF-8 (RFC 3986). An HTTP header carries Latin-1 at most: the
     * client wrote {@code ?} for every other character, so two Hangul subjects shared one key. The identifier
     * rules at reception forbid {@code %} in a subject, so an unencoded key never looks encoded. A subject with a
     * leading or trailing space is encoded too: an HTTP header value is trimmed, so {@code " A"} would become
     * the key of subject {@code A}.
     */
    public String idempotencyKey() {
        boolean trimmedByHttp = srvyDrawupNo.strip().length() != srvyDrawupNo.length();
        return printableAscii(srvyDrawupNo) && !trimmedByHttp ? srvyDrawupNo : percentEncoded(srvyDrawupNo);
    }

    static boolean printableAscii(String value) {
        return value.chars().allMatch(c -> c >= 0x20 && c <= 0x7E);
    }

    /** Every byte of the UTF-8 form except RFC 3986's unreserved characters as {@code %XX}. */
    static String percentEncoded(String value) {
        StringBuilder out = new StringBuilder();
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return out.toString();
    }

    private static String encode(String value) {
        return value == null ? null : URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
