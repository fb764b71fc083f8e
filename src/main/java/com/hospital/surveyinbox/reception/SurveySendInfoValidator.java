package com.hospital.surveyinbox.reception;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.hospital.surveyinbox.inbox.ReceivedMessage;
import com.hospital.surveyinbox.inbox.StorableText;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.component.platform.http.springboot.PlatformHttpMessage;
import org.springframework.stereotype.Component;

/**
 * Reception validation, deliberately minimal (case study §3.1): a message is refused only when it could
 * never be processed — not UTF-8 JSON, not an object, a required field missing or blank, an identifier
 * that would break a downstream URL (CONTRACT §1), an unknown {@code msgType}. Everything else (an empty or garbage {@code sendDt}, extra fields) is stored as is.
 * Error messages name the field, never its value, so no patient data reaches the sender's logs.
 *
 * <p>Called by {@code routes/inbox-receive.camel.yaml}, step {@code inbox-receive-validate}.
 */
@Component("surveySendInfoValidator")
public class SurveySendInfoValidator {

    static final List<String> REQUIRED = List.of("srvyDrawupNo", "patno", "formCd");
    /** Fields that become URL path segments downstream (CONTRACT §1): srvyNo only when present. */
    static final List<String> IDENTIFIERS = List.of("srvyDrawupNo", "patno", "srvyNo");
    /** Optional fields passed on downstream as text (CONTRACT §1: groupCd, patNm, mobileNo; sendDt read as a time). */
    static final List<String> PASSED_ON = List.of("groupCd", "patNm", "mobileNo");
    static final int MAX_IDENTIFIER_LENGTH = 100;
    static final Set<String> MSG_TYPES = Set.of("SEND", "SUBMIT");
    static final int MAX_IDEMPOTENCY_KEY_LENGTH = 200;

    private final ObjectReader reader;

    public SurveySendInfoValidator(ObjectMapper objectMapper) {
        this.reader = objectMapper.reader()
                .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
    }

    /**
     * Step {@code inbox-receive-validate}. It takes the {@link Exchange} because the bytes it must check are
     * the servlet request's, as received ({@link ReceptionBodyLimitFilter#RAW_BODY}): the body platform-http
     * hands the route is already decoded, so an invalid UTF-8 body would pass ({@code ReceptionTest}).
     */
    public ReceivedMessage validate(Exchange exchange) {
        Message in = exchange.getMessage();
        // the content type was judged by ReceptionBodyLimitFilter (415) before the route ran
        byte[] body = rawBody(exchange);
        if (body == null || body.length == 0) {
            throw new ReceptionRejectedException(400, "body is empty; a JSON object is required");
        }
        JsonNode json = parse(body);
        for (String field : REQUIRED) {
            JsonNode value = json.get(field);
            if (value == null || value.isNull()) {
                throw new ReceptionRejectedException(400, "required field '" + field + "' is missing");
            }
            if (!value.isTextual() && !value.isIntegralNumber()) {
                // a decimal is no identifier: read back as a double (1.10 as "1.1", 1E2 as "100.0") it named another
                throw new ReceptionRejectedException(400, "field '" + field + "' must be a string");
            }
            if (value.asText().isBlank()) {
                throw new ReceptionRejectedException(400, "required field '" + field + "' is blank");
            }
        }
        for (String field : IDENTIFIERS) {
            JsonNode value = json.get(field);
            if (value == null || value.isNull()) {
                continue;
            }
            // srvyNo too: an object, an array or a boolean read as no survey, and its consents were skipped
            if (!value.isTextual() && !value.isIntegralNumber()) {
                throw new ReceptionRejectedException(400, "field '" + field + "' must be a string");
            }
            // only ASCII spaces (a padded fixed-width field) read as absent; a tab or a newline is a control character,
            // and other blanks (an ideographic space) would be read as absent by processing too: refused
            String text = value.asText();
            if (!text.chars().allMatch(c -> c == ' ')) {
                if (text.isBlank()) {
                    throw new ReceptionRejectedException(400, "field '" + field + "' must not be blank when present");
                }
                String problem = identifierProblem(text);
                if (problem != null) {
                    throw new ReceptionRejectedException(400, "field '" + field + "' " + problem);
                }
            }
        }
        // the fields passed on downstream as text: an object or an array was read as absent (a questionnaire without
        // its group, a name unknown so a refusal's text withheld), a boolean or a decimal as another text. Not sendDt:
        // whatever it holds, unparsable is stored as-is and means the time of processing (CONTRACT §1)
        for (String field : PASSED_ON) {
            JsonNode value = json.get(field);
            if (value != null && !value.isNull() && !value.isTextual() && !value.isIntegralNumber()) {
                throw new ReceptionRejectedException(400, "field '" + field + "' must be a string");
            }
        }
        // "N" is the one value that means "no notification" (CONTRACT §1); a boolean false read as "not N" notified
        JsonNode notify = json.get("alimtalkYn");
        if (notify != null && !notify.isNull() && !notify.isTextual()) {
            throw new ReceptionRejectedException(400, "field 'alimtalkYn' must be a string (N: no notification)");
        }
        String notText = unicodeProblem(json);
        if (notText != null) {
            throw new ReceptionRejectedException(400, notText);
        }
        String msgType = "SEND";
        JsonNode type = json.get("msgType");
        if (type != null && !type.isNull() && !(type.isTextual() && type.asText().isEmpty())) {
            if (!type.isTextual() || !MSG_TYPES.contains(type.asText())) {
                throw new ReceptionRejectedException(400, "field 'msgType' must be SEND or SUBMIT");
            }
            msgType = type.asText();
        }
        String idempotencyKey = idempotencyKeyHeader(in);
        if (idempotencyKey != null) {
            idempotencyKey = idempotencyKey.strip();
            if (idempotencyKey.isEmpty() || idempotencyKey.length() > MAX_IDEMPOTENCY_KEY_LENGTH) {
                throw new ReceptionRejectedException(400,
                        "header 'Idempotency-Key' must be 1.." + MAX_IDEMPOTENCY_KEY_LENGTH + " characters");
            }
            if (idempotencyKey.chars().anyMatch(c -> StorableText.isControl(c) || (c >= 0x80 && c <= 0x9F))) {
                throw new ReceptionRejectedException(400, "header 'Idempotency-Key' must not contain control characters");
            }
        }
        return new ReceivedMessage(json.get("srvyDrawupNo").asText(), msgType, body, idempotencyKey);
    }

    /** Why a text with an unpaired surrogate is refused. */
    static final String NOT_UNICODE = "must be Unicode text (an unpaired surrogate escape, \\uD800-\\uDFFF, is not)";

    /**
     * The sender's {@code Idempotency-Key} request header, or null. Only the HTTP header: Camel also copies the
     * query string's parameters into the message's headers, and {@code ?Idempotency-Key=…} is no channel of the
     * contract (it would bypass every check Tomcat makes on header values). Sent twice: 400.
     */
    private static String idempotencyKeyHeader(Message in) {
        if (!(in instanceof PlatformHttpMessage http)) {
            return in.getHeader("Idempotency-Key", String.class); // not from HTTP: the route kit's direct calls
        }
        List<String> values = java.util.Collections.list(http.getRequest().getHeaders("Idempotency-Key"));
        if (values.size() > 1) {
            throw new ReceptionRejectedException(400, "header 'Idempotency-Key' must be sent once");
        }
        return values.isEmpty() ? null : values.get(0);
    }

    /**
     * Why a message whose field names or texts (at any depth) hold an unpaired UTF-16 surrogate is refused, naming
     * the top-level field, or null. JSON allows the escape {@code \\uD800} alone; it is no character: PostgreSQL's
     * driver writes it as {@code ?}, so {@code "\\uD800X"} and {@code "\\uDBFFX"} would be stored, keyed, cached and
     * sent downstream as one subject (a SEND of one read as the resend of the other).
     */
    static String unicodeProblem(JsonNode message) {
        for (java.util.Iterator<Map.Entry<String, JsonNode>> fields = message.fields(); fields.hasNext(); ) {
            Map.Entry<String, JsonNode> field = fields.next();
            if (StorableText.hasUnpairedSurrogate(field.getKey())) {
                return "a field name " + NOT_UNICODE;
            }
            if (holdsUnpairedSurrogate(field.getValue())) {
                return "field '" + field.getKey() + "' " + NOT_UNICODE;
            }
        }
        return null;
    }

    private static boolean holdsUnpairedSurrogate(JsonNode node) {
        java.util.ArrayDeque<JsonNode> pending = new java.util.ArrayDeque<>(List.of(node));
        while (!pending.isEmpty()) {
            JsonNode next = pending.pop();
            if (next.isTextual() && StorableText.hasUnpairedSurrogate(next.textValue())) {
                return true;
            }
            if (next.isObject()) {
                for (java.util.Iterator<Map.Entry<String, JsonNode>> it = next.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> child = it.next();
                    if (StorableText.hasUnpairedSurrogate(child.getKey())) {
                        return true;
                    }
                    pending.push(child.getValue());
                }
            } else if (next.isArray()) {
                next.forEach(pending::push);
            }
        }
        return false;
    }

    /**
     * Why a value cannot be an identifier that becomes a downstream path segment (CONTRACT §1), or null:
     * 1–100 characters, no control character, none of {@code / \ ? # %}, not {@code .} or {@code ..}, Unicode
     * text. The answer describes the rule, never the value.
     */
    static String identifierProblem(String value) {
        int length = value.codePointCount(0, value.length());
        if (length > MAX_IDENTIFIER_LENGTH) {
            return "must be at most " + MAX_IDENTIFIER_LENGTH + " characters";
        }
        if (value.equals(".") || value.equals("..")) {
            return "must not be . or ..";
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            // the contract's control characters (U+0000-U+001F, U+007F) and nothing more: a C1 control or an invisible
            // format character (a zero-width joiner inside an emoji, a byte order mark) is allowed there, and a 400 is
            // a dispatch the legacy system never sends again; downstream it is percent-encoded like any non-ASCII
            if (StorableText.isControl(c)) {
                return "must not contain control characters";
            }
            if (c == '/' || c == '\\' || c == '?' || c == '#' || c == '%') {
                return "must not contain / \\ ? # or %";
            }
        }
        return StorableText.hasUnpairedSurrogate(value) ? NOT_UNICODE : null;
    }

    /** Why a Content-Type is refused (415), or null when it is JSON in UTF-8. */
    public static String contentTypeProblem(String contentType) {
        if (contentType == null || contentType.isBlank()) {
            return "Content-Type must be application/json";
        }
        String mediaType = contentType.split(";", 2)[0].strip().toLowerCase();
        if (!mediaType.equals("application/json") && !(mediaType.startsWith("application/") && mediaType.endsWith("+json"))) {
            return "Content-Type must be application/json";
        }
        String lower = contentType.toLowerCase();
        int charset = lower.indexOf("charset=");
        if (charset >= 0) {
            String name = lower.substring(charset + 8).split(";", 2)[0].strip().replace("\"", "");
            if (!name.equals("utf-8") && !name.equals("utf8")) {
                return "charset must be UTF-8";
            }
        }
        return null;
    }

    /** The body bytes exactly as received, as kept by {@link ReceptionBodyLimitFilter}. */
    private static byte[] rawBody(Exchange exchange) {
        if (exchange.getMessage() instanceof PlatformHttpMessage http
                && http.getRequest().getAttribute(ReceptionBodyLimitFilter.RAW_BODY) instanceof byte[] raw) {
            return raw;
        }
        return exchange.getMessage().getBody(byte[].class);
    }

    private JsonNode parse(byte[] body) {
        try {
            StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body));
        } catch (CharacterCodingException e) {
            throw new ReceptionRejectedException(400, "body is not valid UTF-8");
        }
        // a NUL among the first bytes is UTF-16 or UTF-32 without a byte order mark (valid UTF-8 byte by byte when
        // ASCII): Jackson would detect and read it; no JSON text in UTF-8 starts so
        for (int i = 0; i < Math.min(4, body.length); i++) {
            if (body[i] == 0) {
                throw new ReceptionRejectedException(400, "body is not valid UTF-8");
            }
        }
        JsonNode json;
        try {
            json = reader.readTree(body);
        } catch (JsonProcessingException e) {
            throw new ReceptionRejectedException(400, "body is not valid JSON");
        } catch (java.io.IOException e) {
            throw new ReceptionRejectedException(400, "body could not be read");
        }
        if (json == null || json.isMissingNode()) {
            throw new ReceptionRejectedException(400, "body is empty; a JSON object is required");
        }
        if (!json.isObject()) {
            throw new ReceptionRejectedException(400, "body must be a JSON object");
        }
        return json;
    }
}
