package com.hospital.surveyinbox.processing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.ReplyReason;
import java.io.IOException;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * What {@code routes/inbox-register.camel.yaml} cannot say clearly in YAML: reading the stored message,
 * building the request bodies, picking the guest id out of an answer, and naming the outcomes. Plain
 * typed methods; the order of the calls and every decision stay in the route.
 */
@Component("registrationSteps")
public class RegistrationSteps {

    private static final Logger log = LoggerFactory.getLogger(RegistrationSteps.class);

    /** Strict: 20260230093000 is no date (the default resolver took it for 28 February, a day the sender never named). */
    /** {@code sendAt} as the bundle carries it: seconds always, no fraction, the offset (RFC 3339). */
    static final DateTimeFormatter SEND_AT = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssXXX");
    static final DateTimeFormatter SEND_DT = DateTimeFormatter.ofPattern("uuuuMMddHHmmss")
            .withResolverStyle(java.time.format.ResolverStyle.STRICT);

    private final AdapterProperties properties;
    private final ObjectMapper mapper;

    public RegistrationSteps(AdapterProperties properties, ObjectMapper mapper) {
        this.properties = properties;
        this.mapper = mapper;
    }

    /** The key id a failure says this instance lacks to open the payload ({@link PayloadKeyMissingException}), or null. */
    public String missingKey(Throwable failure) {
        return PayloadKeyMissingException.keyIdIn(failure);
    }

    /**
     * Named parameters of step {@code inbox-register-renew-claim} ({@code sql/renew-claim.sql}): the row, its subject and
     * this registration's claim (a stored row's claim token, or on the synchronous path its subject's lease holder).
     */
    public Map<String, Object> claim(ClaimedRow row) {
        return Map.of("id", row.inboxId(), "srvyDrawupNo", row.srvyDrawupNo(),
                "token", Objects.requireNonNull(row.claimToken(), "a claimed row's token").toString());
    }

    /**
     * Step {@code inbox-register-when-claim-lost}: the claim was gone before a submission or a resend
     * ({@code sql/renew-claim.sql} found no row); said, and the outcome that sends nothing.
     */
    public Outcome claimLost(ClaimedRow row) {
        String call = "SUBMIT".equals(row.msgType()) ? "submission" : "resend";
        if (row.inboxId() == ClaimedRow.NOT_STORED) {
            log.warn("Synchronous registration of {}: its subject's lease expired, was taken over or removed before the {}; "
                    + "nothing sent, answered 503", row.srvyDrawupNo(), call);
        } else {
            log.warn("Inbox {} attempt {}: its claim was gone before the {} (the row was reset as stuck or requeued while "
                    + "this worker held it, e.g. paused past stuck-processing-after); nothing sent", row.inboxId(),
                    row.attempt(), call);
        }
        return Outcome.claimLost();
    }

    /** Step {@code inbox-register-read}: the claimed payload as the fields the flow uses. */
    public Registration read(ClaimedRow row) {
        if (row.missingKey() != null) {
            throw new PayloadKeyMissingException(row.missingKey());
        }
        if (row.payload() == null) {
            throw new IllegalStateException("stored payload unavailable (redacted, not decryptable, or its key missing past key-wait)");
        }
        JsonNode message;
        try {
            message = mapper.readTree(row.payload());
        } catch (IOException e) {
            throw new IllegalStateException("stored payload is not JSON");
        }
        return new Registration(row.inboxId(), row.srvyDrawupNo(), row.msgType(), text(message, "patno"),
                text(message, "srvyNo"), text(message, "formCd"), text(message, "groupCd"), text(message, "patNm"),
                text(message, "mobileNo"), !noNotification(text(message, "alimtalkYn")),
                sendAt(text(message, "sendDt")), message);
    }

    /**
     * Whether {@code alimtalkYn} says "no notification": N however the legacy system spelled it — padded (a
     * fixed-width field), full-width (an IME's Ｎ) or in lower case. Read as "notify", the patient was sent a
     * notification the hospital suppressed.
     */
    static boolean noNotification(String alimtalkYn) {
        return alimtalkYn != null
                && "N".equalsIgnoreCase(java.text.Normalizer.normalize(alimtalkYn, java.text.Normalizer.Form.NFKC).strip());
    }

    /**
     * Checks the legacy patient lookup's answer (steps inbox-register-check-patient, inside the lookup's step, so a
     * failure names the lookup, and inbox-register-check-patient-for-masking): the contract's JSON object {@code {"patno","patNm","mobileNo"}} of the message's
     * patient, else a system error. A record naming another {@code patno} (a caching proxy or a legacy fault mixing
     * two lookups) is refused: its name and mobile would become this patient's guest account, and the survey
     * link of one patient would go to another's phone. A record without {@code patno} is taken as the patient's;
     * one that writes it otherwise is the same patient: a JSON number by its value ({@code 12345} for
     * {@code "0012345"}: a number keeps no zeros), a text whatever its width, case or surrounding spaces.
     */
    public void patientRecord(Registration msg, String answer) {
        patientObject(msg, answer);
    }

    private JsonNode patientObject(Registration msg, String answer) {
        JsonNode patient = json(answer);
        if (!patient.isObject()) {
            throw new SystemException("legacy", "patient answer is not a JSON object", null);
        }
        JsonNode named = patient.get("patno");
        if (named != null && !named.isNull() && !samePatno(named, msg.patno())) {
            throw new SystemException("legacy", "patient answer names another patient", null);
        }
        return patient;
    }

    static boolean samePatno(JsonNode named, String patno) {
        String mine = java.text.Normalizer.normalize(String.valueOf(patno), java.text.Normalizer.Form.NFKC).strip();
        if (named.isNumber()) {
            try {
                return named.decimalValue().compareTo(new java.math.BigDecimal(mine)) == 0;
            } catch (NumberFormatException notANumber) {
                return false;
            }
        }
        String theirs = java.text.Normalizer.normalize(named.asText(), java.text.Normalizer.Form.NFKC).strip();
        return theirs.equalsIgnoreCase(mine);
    }

    /**
     * Body of {@code POST {account}/guests}: the legacy patient record's name and mobile, else the message's. The
     * record must be a JSON object (CONTRACT §3: {@code {"patno","patNm","mobileNo"}}): an answer of another shape
     * ({@code []}, a string) read as "no name, no mobile" created a permanent guest account without either, which
     * every later SEND of the patient reused.
     */
    public String guestBody(Registration msg, String patientJson) {
        JsonNode patient = patientObject(msg, patientJson);
        ObjectNode guest = mapper.createObjectNode();
        guest.put("patno", msg.patno());
        guest.put("patNm", firstText(patient, "patNm", msg.patNm()));
        guest.put("mobileNo", firstText(patient, "mobileNo", msg.mobileNo()));
        return write(guest);
    }

    /**
     * The {@code guestId} of an account answer (found, created, or 409 "exists"), as the account service wrote it: a
     * number stays a number in the bundle (sent as text, a survey side comparing JSON values saw another id).
     */
    private JsonNode guestId(String answer) {
        JsonNode id = json(answer).path("guestId");
        if (id.isNumber() || id.isTextual() && !id.asText().isBlank()) {
            return id;
        }
        throw new SystemException("account", "guest answer without guestId", null);
    }

    /**
     * Body of {@code POST {survey}/dispatch-bundles} (CONTRACT §3 step 4), with the {@code guestId} of the
     * account's answer (found, created, or 409 "exists").
     */
    public String bundleBody(Registration msg, String guestAnswer, String consentsJson) {
        JsonNode guestId = guestId(guestAnswer);
        ObjectNode bundle = mapper.createObjectNode();
        bundle.put("srvyDrawupNo", msg.srvyDrawupNo());
        bundle.put("formCd", msg.formCd());
        bundle.put("groupCd", msg.groupCd());
        bundle.set("guestId", guestId);
        bundle.set("consents", consentsJson == null ? mapper.createArrayNode() : json(consentsJson));
        bundle.put("sendAt", msg.sendAt());
        bundle.put("notify", msg.notifyPatient());
        return write(bundle);
    }

    /**
     * {@code json} (an object) with one more field: {@code value} embedded as JSON when it is the JSON text of
     * an object or an array (a downstream's answer), else as a string; a null value leaves the field out. How a
     * route puts a lookup's answer into a request body without Java
     * ({@code "with(${variable.bundleRequest}, 'form', ${variable.form})"}). For a field of the message use
     * {@link #withField}: a sender's text must never become JSON structure.
     */
    public String with(String json, String field, String value) {
        JsonNode embedded = value == null ? null : jsonOrNull(value);
        return withNode(json, field, embedded != null && embedded.isContainerNode() ? embedded : textOrNull(value));
    }

    /**
     * {@code json} (an object) with the message's field {@code name} added as {@code field}, always as text
     * (a sender's value that looks like JSON stays a string); absent, the field is left out. The message
     * field is read here, not passed as text through the route, so no quote or "null" in it is reinterpreted.
     */
    public String withField(String json, String field, Registration msg, String name) {
        return withNode(json, field, textOrNull(msg.field(name)));
    }

    /** {@code json} (an object) with {@code value} as {@code field}; a null value leaves the field out. */
    private String withNode(String json, String field, JsonNode value) {
        JsonNode node = json(json);
        if (!node.isObject()) {
            throw new IllegalArgumentException("not a JSON object: the field '" + field + "' cannot be added");
        }
        if (value != null) {
            ((ObjectNode) node).set(field, value);
        }
        return write(node);
    }

    private static JsonNode textOrNull(String value) {
        return value == null ? null : com.fasterxml.jackson.databind.node.TextNode.valueOf(value);
    }

    /** Registered without a notification ({@code alimtalkYn=N}): the legacy system is told so. */
    public Outcome notifySkipped() {
        return Outcome.completedWithReply(ReplyReason.NOTIFY_SKIPPED,
                "questionnaire created; no notification sent (alimtalkYn=N)");
    }

    /**
     * A resend refused because the questionnaire was submitted: the row completes and the legacy system is told why.
     *
     * @param reason the downstream's message, masked ({@code downstreamCalls.maskedMessage}), or null
     */
    public Outcome alreadySubmitted(String reason) {
        return Outcome.completedWithReply(ReplyReason.ALREADY_SUBMITTED,
                reason == null ? "questionnaire already submitted; cannot resend" : reason);
    }

    /**
     * {@code sendDt} in the legacy zone; empty or unparsable means "now" (case study §3.1). Always with its seconds
     * (RFC 3339): {@code OffsetDateTime.toString()} leaves out ":00", which a strict parser on the survey side refuses.
     */
    String sendAt(String sendDt) {
        if (sendDt != null) {
            try {
                return SEND_AT.format(LocalDateTime.parse(sendDt.strip(), SEND_DT).atZone(properties.getLegacy().getZone()));
            } catch (DateTimeParseException e) {
                // stored as received; processing time applies
            }
        }
        return SEND_AT.format(OffsetDateTime.now(properties.getLegacy().getZone()));
    }

    private JsonNode json(String body) {
        try {
            JsonNode node = body == null || body.isBlank() ? null : mapper.readTree(body);
            if (node == null || node.isMissingNode()) {
                throw new SystemException(null, "empty response body", null);
            }
            return node;
        } catch (IOException e) {
            throw new SystemException(null, "unreadable response body", e);
        }
    }

    private JsonNode jsonOrNull(String text) {
        String trimmed = text.strip();
        if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) {
            return null;
        }
        try {
            return mapper.readTree(trimmed);
        } catch (IOException e) {
            return null;
        }
    }

    private String write(JsonNode node) {
        try {
            return mapper.writeValueAsString(node);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull() || value.asText().isBlank()) {
            return null;
        }
        return value.asText();
    }

    private static String firstText(JsonNode preferred, String field, String fallback) {
        String value = text(preferred, field);
        return value != null ? value : fallback;
    }
}
