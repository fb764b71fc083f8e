package com.hospital.surveyinbox.processing;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The claimed message as {@code routes/inbox-register.camel.yaml} reads it: the variable
 * {@code ${variable.msg}}. The fields the flow always uses are named ({@code ${variable.msg.srvyNo}});
 * any other field of the stored message is {@link #field} ({@code ${variable.msg.field('wardCd')}}), so a
 * route can use a field the code does not know. Values that go into a URL have accessors that encode them,
 * so a route never builds a URL from raw text: {@link #segment} for a path segment of a {@code toD} uri,
 * and {@link #query} for a query value.
 *
 * @param inboxId the row's id; above every stored id on the synchronous path (its record is stored only after it)
 * @param notifyPatient false when {@code alimtalkYn=N}: create the questionnaire, send no notification
 * @param sendAt  {@code sendDt} as an ISO offset time in the legacy zone, or the time of processing
 * @param message the stored message as received (every field, including those the code does not name)
 */
public record Registration(long inboxId, String srvyDrawupNo, String msgType, String patno, String srvyNo,
                           String formCd, String groupCd, String patNm, String mobileNo, boolean notifyPatient,
                           String sendAt, JsonNode message) {

    /**
     * Ids only: a record's own {@code toString} printed patno, name, mobile and the whole message, and Camel quotes a
     * value it cannot convert in its exception's message ("No type converter … with value …") — a route edit that
     * passes {@code ${variable.msg}} where a text is expected would put the patient in a log line.
     */
    @Override
    public String toString() {
        return "Registration[inboxId=" + inboxId + ", srvyDrawupNo=" + srvyDrawupNo + ", msgType=" + msgType
                + "] (patient data not shown)";
    }

    /** Named parameters of the statements the registration runs ({@code sql/has-completed-send.sql}). */
    public Map<String, Object> params() {
        return Map.of("id", inboxId, "srvyDrawupNo", srvyDrawupNo, "msgType", msgType);
    }

    /**
     * A top-level field of the message as text ({@code ${variable.msg.field('wardCd')}}); null when it is
     * absent, null or blank. Objects and arrays come back as their JSON text.
     */
    public String field(String name) {
        JsonNode value = message == null ? null : message.get(name);
        if (value == null || value.isNull() || value.isMissingNode()) {
            return null;
        }
        String text = value.isContainerNode() ? value.toString() : value.asText();
        return text.isBlank() ? null : text;
    }

    /**
     * A field as one path segment of a {@code toD} http uri
     * ({@code "{{adapter.legacy.base-url}}/patients/${variable.msg.segment('patno')}"}): every character outside
     * RFC 3986's unreserved set percent-encoded, and then encoded once more,
     * because camel-http's {@code toD} optimisation decodes the uri's path once before it sends the request
     * (it keeps one endpoint per base URL and passes the path in {@code CamelHttpPath}). The request then carries
     * the value encoded exactly once: a {@code /}, {@code ;} or {@code ?} in a value can never become part of
     * the URL's structure. Throws when the field is absent (a URL with "null" in it is never sent) and when it is
     * {@code .} or {@code ..}: percent-encoded, a dot-segment is still one (RFC 3986 6.2.2.2: servers and proxies
     * decode {@code %2E} before they resolve the path), so {@code /forms/..} would reach the parent resource.
     */
    public String segment(String name) {
        String value = field(name);
        if (value == null) {
            throw new SystemException(null, "message field '" + name + "' is absent: it cannot be a path segment", null);
        }
        if (value.equals(".") || value.equals("..")) {
            throw new SystemException(null, "message field '" + name + "' is a dot-segment: it cannot be a path segment", null);
        }
        return percentEncoded(percentEncoded(value));
    }

    /**
     * A field as a query value for the {@code CamelHttpQuery} header ({@code "patno=${variable.msg.query('patno')}"}),
     * percent-encoded once ({@code +}, {@code &}, {@code =} included); null when the field is absent.
     */
    public String query(String name) {
        String value = field(name);
        return value == null ? null : percentEncoded(value);
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

}
