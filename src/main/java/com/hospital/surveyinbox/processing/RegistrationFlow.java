package com.hospital.surveyinbox.processing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hospital.surveyinbox.cache.ConsentCache;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.ClaimedRow;
import com.hospital.surveyinbox.inbox.InboxStore;
import com.hospital.surveyinbox.inbox.ReplyReason;
import java.io.IOException;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import org.springframework.stereotype.Component;

/**
 * The registration steps of CONTRACT §3, in order. Every step is safe to repeat: the guest is found
 * before it is created (409 means "exists, use it"), and the survey side creates the dispatch bundle
 * atomically under {@code Idempotency-Key = srvyDrawupNo}, so a retry after a partial failure leaves
 * no orphan and creates nothing twice (case study §4.1).
 */
@Component
public class RegistrationFlow {

    static final DateTimeFormatter SEND_DT = DateTimeFormatter.ofPattern("yyyyMMddHHmmss");

    private final DownstreamClient downstream;
    private final ConsentCache consentCache;
    private final InboxStore store;
    private final AdapterProperties properties;
    private final ObjectMapper mapper;

    public RegistrationFlow(DownstreamClient downstream, ConsentCache consentCache, InboxStore store,
                            AdapterProperties properties, ObjectMapper mapper) {
        this.downstream = downstream;
        this.consentCache = consentCache;
        this.store = store;
        this.properties = properties;
        this.mapper = mapper;
    }

    /**
     * Runs the flow for a claimed row. Throws {@link BusinessException} or {@link SystemException}
     * (or anything else, which the caller treats as a system error).
     *
     * A SEND whose subject already has a COMPLETED SEND is a resend request.
     */
    public Outcome register(ClaimedRow row) {
        JsonNode message = parse(row.payload());
        String subject = row.srvyDrawupNo();
        if ("SUBMIT".equals(row.msgType())) {
            expect(downstream.call("survey-submission", "survey", Map.of("srvyDrawupNo", subject), Map.of(), null),
                    "survey", 200);
            return Outcome.completed();
        }
        if (store.hasCompletedSendBefore(row)) {
            return resend(subject);
        }
        String patno = text(message, "patno");
        String srvyNo = text(message, "srvyNo");
        JsonNode consents = srvyNo == null ? mapper.createArrayNode() : readJson(consentCache.consents(srvyNo,
                () -> expect(downstream.call("legacy-consents", "legacy", Map.of("srvyNo", srvyNo), Map.of(), null),
                        "legacy", 200).body()));
        JsonNode patient = readJson(expect(downstream.call("legacy-patient", "legacy", Map.of("patno", patno), Map.of(), null),
                "legacy", 200).body());
        String guestId = ensureGuest(patno, firstText(patient, message, "patNm"), firstText(patient, message, "mobileNo"));
        boolean notify = !"N".equalsIgnoreCase(text(message, "alimtalkYn"));

        ObjectNode bundle = mapper.createObjectNode();
        bundle.put("srvyDrawupNo", subject);
        bundle.put("formCd", text(message, "formCd"));
        bundle.put("groupCd", text(message, "groupCd"));
        bundle.put("guestId", guestId);
        bundle.set("consents", consents);
        bundle.put("sendAt", sendAt(text(message, "sendDt")));
        bundle.put("notify", notify);
        expect(downstream.call("survey-bundle", "survey", Map.of(), Map.of("Idempotency-Key", subject), write(bundle)),
                "survey", 200, 201);
        return notify ? Outcome.completed()
                : Outcome.completedWithReply(ReplyReason.NOTIFY_SKIPPED,
                        "questionnaire created; no notification sent (alimtalkYn=N)");
    }

    /** A second SEND for a completed subject asks the survey side to send again; refused once submitted. */
    private Outcome resend(String subject) {
        DownstreamResponse response = downstream.call("survey-resend", "survey", Map.of("srvyDrawupNo", subject), Map.of(), null);
        if (response.status() == 409) {
            JsonNode error = errorBody(response);
            if (error != null && "ALREADY_SUBMITTED".equals(error.path("code").asText())) {
                String reason = error.path("message").asText("questionnaire already submitted; cannot resend");
                return Outcome.completedWithReply(ReplyReason.ALREADY_SUBMITTED, reason);
            }
        }
        expect(response, "survey", 200);
        return Outcome.completed();
    }

    private String ensureGuest(String patno, String patNm, String mobileNo) {
        DownstreamResponse found = downstream.call("account-guest-find", "account", Map.of("patno", patno), Map.of(), null);
        if (found.status() == 200) {
            return guestId(found);
        }
        if (found.status() != 404) {
            expect(found, "account", 200);
        }
        ObjectNode guest = mapper.createObjectNode();
        guest.put("patno", patno);
        guest.put("patNm", patNm);
        guest.put("mobileNo", mobileNo);
        // 409 carries the guestId of an account that already exists: use it
        return guestId(expect(downstream.call("account-guest-create", "account", Map.of(), Map.of(), write(guest)),
                "account", 200, 201, 409));
    }

    private String guestId(DownstreamResponse response) {
        JsonNode body = readJson(response.body());
        String id = body.path("guestId").asText(null);
        if (id == null || id.isBlank()) {
            throw new SystemException("account", "guest answer without guestId", null);
        }
        return id;
    }

    /** Passes through an expected status; otherwise classifies: 4xx {code,message} = business, else system. */
    private DownstreamResponse expect(DownstreamResponse response, String system, int... ok) {
        for (int status : ok) {
            if (response.status() == status) {
                return response;
            }
        }
        if (response.is2xx()) {
            return response;
        }
        if (response.status() >= 400 && response.status() < 500) {
            JsonNode error = errorBody(response);
            if (error != null && error.hasNonNull("message") && !error.get("message").asText().isBlank()) {
                throw new BusinessException(error.path("code").asText(null), error.get("message").asText());
            }
        }
        throw new SystemException(system, system + " answered HTTP " + response.status(), null);
    }

    private JsonNode errorBody(DownstreamResponse response) {
        try {
            JsonNode node = response.body() == null ? null : mapper.readTree(response.body());
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** {@code sendDt} in the legacy zone; empty or unparsable means "now" (case study §3.1). */
    String sendAt(String sendDt) {
        if (sendDt != null) {
            try {
                return LocalDateTime.parse(sendDt.strip(), SEND_DT).atZone(properties.getLegacy().getZone())
                        .toOffsetDateTime().toString();
            } catch (DateTimeParseException e) {
                // stored as received; processing time applies
            }
        }
        return OffsetDateTime.now(properties.getLegacy().getZone()).withNano(0).toString();
    }

    private JsonNode parse(byte[] payload) {
        if (payload == null) {
            throw new IllegalStateException("stored payload unavailable (redacted or not decryptable)");
        }
        try {
            return mapper.readTree(payload);
        } catch (IOException e) {
            throw new IllegalStateException("stored payload is not JSON", e);
        }
    }

    private JsonNode readJson(String body) {
        try {
            JsonNode node = body == null ? null : mapper.readTree(body);
            if (node == null || node.isMissingNode()) {
                throw new SystemException("downstream", "empty response body", null);
            }
            return node;
        } catch (IOException e) {
            throw new SystemException("downstream", "unreadable response body", e);
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

    private static String firstText(JsonNode preferred, JsonNode fallback, String field) {
        String value = text(preferred, field);
        return value != null ? value : text(fallback, field);
    }
}
