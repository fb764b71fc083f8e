package com.hospital.surveyinbox.processing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.config.LoggedFailure;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.apache.camel.Exchange;
import org.apache.camel.ExchangePropertyKey;
import org.apache.camel.http.base.HttpOperationFailedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * What every downstream HTTP step of the registration gets without a line of Java, through the
 * {@code routeConfiguration} {@code inbox-downstream} ({@code routes/inbox-downstream.camel.yaml}), and how a
 * failed registration is named:
 * <ul>
 *   <li>{@link #before}: which downstream the call goes to (by base URL), its circuit (open = the call is
 *       not made: {@link CircuitOpenException}; half-open, only its trials: DownstreamCircuits), the request's
 *       fingerprint (endpoint, path, query, body), JSON headers, a timer;</li>
 *   <li>{@link #after}: the call is accounted — an answer the step accepts tells the circuit the call answered;
 *       a 5xx, a 3xx (never followed), a "not now" 4xx ({@link #NOT_NOW}: 401, 407, 408, 429), a markup page
 *       whatever its status ({@link #markup}: a gateway's, not the API's; one the step accepted fails the call), a
 *       timeout or a refused connection counts against it, per call and request, and so does a 4xx whose body is
 *       text and not JSON (a gateway's, accepted or not; another 4xx does not: the API answered), and so does an
 *       accepted answer that is not what the route declared before the call ({@link #ANSWER_IS}, {@link #ANSWER_NAMES},
 *       {@link #CREATED_NAMES}; checked at start by {@link DeclaredAnswers}) — the timer stops, and the answer's
 *       headers are dropped so nothing of one call is sent on the next;</li>
 *   <li>{@link #classify}: the exception that ended a registration as an {@link Outcome} — 4xx with
 *       {@code {code,message}} is a business error with that message (the row's patient values masked, or
 *       withheld when the patient's name is not known: {@link #masked}); 3xx, 5xx, "not now" 4xx, markup pages,
 *       timeouts, refused connections and anything else a system error, charged; a call the circuit refused
 *       defers the row uncharged.</li>
 * </ul>
 * Which statuses a step accepts is the step's {@code okStatusCodeRange} in YAML; anything else throws and
 * comes to {@link #classify}. The timer and error metrics are tagged {@code call} with the enclosing
 * {@code step} id. {@link #before} and {@link #after} take the {@link Exchange}: they are the interceptor.
 */
@Component("downstreamCalls")
public class DownstreamCalls {

    private static final Logger log = LoggerFactory.getLogger(DownstreamCalls.class);
    /** Exchange property: the downstream of the last call (legacy, account, survey, other). */
    static final String DOWNSTREAM = "downstream";
    /** Exchange property: the last call's name, taken before the call (a failing {@code step} clears its own id). */
    static final String CALL = "downstreamCall";
    /**
     * Exchange property a route sets (true) around a call whose answers must not move its downstream's circuit nor be
     * refused by it: the replies of routes/inbox-reply.camel.yaml, which consult the circuit themselves. The interceptor
     * wraps every HTTP endpoint of the context, whichever route configuration declared it.
     */
    static final String CIRCUIT_EXEMPT = "circuitExempt";
    private static final String STARTED = "downstreamStartedNanos";
    /** The request's fingerprint (URL, query, body): the circuit tells one request failing again from many failing. */
    private static final String REQUEST = "downstreamRequest";

    private final AdapterProperties properties;
    private final DownstreamCircuits circuits;
    private final MeterRegistry meters;
    private final ObjectMapper mapper;

    public DownstreamCalls(AdapterProperties properties, DownstreamCircuits circuits, MeterRegistry meters,
                           ObjectMapper mapper) {
        this.properties = properties;
        this.circuits = circuits;
        this.meters = meters;
        this.mapper = mapper;
    }

    /** Before an HTTP step: name the downstream, refuse the call while its circuit is open, start the timer. */
    public void before(Exchange exchange) {
        String uri = exchange.getProperty(ExchangePropertyKey.INTERCEPTED_ENDPOINT, String.class);
        String downstream = downstreamOf(uri, exchange.getMessage().getHeader(Exchange.HTTP_PATH, String.class));
        exchange.setProperty(DOWNSTREAM, downstream);
        String step = exchange.getProperty(ExchangePropertyKey.STEP_ID, String.class);
        String call = step != null ? step : downstream;
        exchange.setProperty(CALL, call);
        // what the route declared for this call's answer, taken here: a call the circuit refuses (no after()) leaves
        // nothing for the exchange's next call (a reply after a refused lookup would be held to the lookup's shape)
        Object shape = exchange.removeProperty(ANSWER_IS);
        Object created = exchange.removeProperty(CREATED_NAMES);
        Object names = exchange.removeProperty(ANSWER_NAMES);
        exchange.removeProperty(EXPECTED_SHAPE);
        exchange.removeProperty(EXPECTED_CREATED);
        exchange.removeProperty(EXPECTED_NAMES);
        if (shape != null && !SHAPES.contains(shape)) { // a typo in a route fails its call, never weakens the check
            throw new IllegalArgumentException(ANSWER_IS + " must be one of " + SHAPES + ", not '" + shape + "'");
        }
        if (!exempt(exchange) && !circuits.admit(downstream, call)) {
            throw new CircuitOpenException(downstream); // open, or half-open with its trials taken
        }
        if (!exempt(exchange)) {
            exchange.setProperty(EXPECTED_SHAPE, shape);
            exchange.setProperty(EXPECTED_CREATED, created);
            exchange.setProperty(EXPECTED_NAMES, names);
        }
        exchange.getMessage().setHeader("Accept", "application/json");
        // bodies are UTF-8 JSON (RFC 8259), said so, whatever charset an earlier answer named (HostileAnswersTest)
        if (exchange.getMessage().getBody() != null && exchange.getMessage().getHeader(Exchange.CONTENT_TYPE) == null) {
            exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, "application/json; charset=UTF-8");
        }
        // toD's endpoint is the base URL alone: the path values travel in CamelHttpPath
        exchange.setProperty(REQUEST, fingerprint(uri, exchange.getMessage().getHeader(Exchange.HTTP_PATH, String.class),
                exchange.getMessage().getHeader(Exchange.HTTP_QUERY, String.class), exchange.getMessage().getBody()));
        exchange.setProperty(STARTED, System.nanoTime());
    }

    /**
     * What tells two requests apart for the circuit: the endpoint and path (the path values), the query and a text
     * body (the routes send JSON text). Kept in memory only; a collision makes two requests count as one.
     */
    static int fingerprint(String endpoint, String path, String query, Object body) {
        return java.util.Objects.hash(endpoint, path, query, body instanceof byte[] bytes ? java.util.Arrays.hashCode(bytes)
                : body instanceof CharSequence text ? text.toString() : null);
    }

    /**
     * A 4xx: the downstream answered and refused (CONTRACT §3: a business error when it says why); not a 3xx or 5xx,
     * and not a 4xx that says "not now" rather than "no": {@link #NOT_NOW}.
     */
    static boolean refusal(HttpOperationFailedException http) {
        return http.getStatusCode() >= 400 && http.getStatusCode() < 500 && !NOT_NOW.contains(http.getStatusCode());
    }

    /**
     * 4xx statuses that say nothing about the message: 401 and 407 (our credentials, or a proxy's, refused), 408 (a
     * timeout) and 429 (too many requests). Like a 5xx they count against the circuit and are system errors whatever
     * their body says: taken as refusals, a rate limiter or an expired credential walked every row to DEAD, each
     * with a failure reply quoting "rate limit exceeded" as the business reason, while the circuit heard "up".
     */
    static final java.util.Set<Integer> NOT_NOW = java.util.Set.of(401, 407, 408, 429);

    /**
     * Whether a body is markup (an HTML or XML page: its first character, past white space, is '<'): a gateway's,
     * a firewall's or a maintenance page answering for the downstream, never its JSON API. Whatever its status, it
     * counts against the circuit, and a status the step accepted fails the call: a maintenance page answered 200
     * to the bundle's POST completed the row with nothing created, silently (no reply is owed for a completed row).
     */
    static boolean markup(String body) {
        if (body == null) {
            return false;
        }
        for (int i = 0; i < body.length(); i++) { // not stripLeading(): no copy of an answer of up to a mebibyte
            if (!Character.isWhitespace(body.charAt(i)) && body.charAt(i) != '\uFEFF') { // past a byte order mark too
                return body.charAt(i) == '<';
            }
        }
        return false;
    }

    /** A text answer without the byte order mark some servers put first (JSON must not carry one: RFC 8259 §8.1). */
    static String withoutByteOrderMark(String body) {
        return body != null && body.startsWith("\uFEFF") ? body.substring(1) : body;
    }

    /**
     * Whether a failure is a downstream's refusal: a 4xx that is not "not now" ({@link #NOT_NOW}) and not a markup
     * page. What the routes ask where a refusal is handled apart (inbox-consents-lookup-refused: shared with the
     * lookup's waiters; inbox-register-when-record-unread: its text to mask).
     */
    public boolean isRefusal(Exception failure) {
        return failure instanceof HttpOperationFailedException http && refusal(http) && !markup(http.getResponseBody());
    }

    /**
     * Whether a 4xx's body can be the downstream API's own answer: JSON (CONTRACT §3's {@code {"code":…,"message":…}},
     * ALREADY_SUBMITTED's {@code {"code":…}}, whatever a lookup's 404 carries) or nothing at all (a bare 404 may be a
     * lookup's "no such survey"). Text that is not JSON is a gateway's or a proxy's ("404 page not found", "no Route
     * matched", "Forbidden"), as a markup page is.
     */
    boolean answeredByTheApi(String body) {
        return body == null || body.isBlank() || jsonValue(body) != null;
    }

    /** {@code text} read as one JSON value (trailing tokens refused, a byte order mark skipped), or null: blank, or no JSON. */
    private JsonNode jsonValue(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            JsonNode node = mapper.reader().with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                    .readTree(withoutByteOrderMark(text));
            return node == null || node.isMissingNode() ? null : node;
        } catch (IOException e) {
            return null;
        }
    }

    /** The {@code code} of a downstream answer {@code {"code":…,"message":…}}, or null. */
    public String code(String answer) {
        JsonNode error = errorBody(answer);
        return error == null ? null : error.path("code").asText(null);
    }

    /**
     * A status the step accepted but the route does not want after all (e.g. a 409 other than
     * ALREADY_SUBMITTED): fails the flow exactly as if the step had not accepted it.
     */
    public void refuse(int status, String answer, String call) throws HttpOperationFailedException {
        if (businessMessage(answer) == null) { // counted as the step's own unaccepted 4xx would be
            meters.counter("adapter.downstream.errors", "call", call == null ? "unknown" : call, "kind", "4xx").increment();
        }
        throw new HttpOperationFailedException(null, status, null, null, java.util.Map.of(), answer);
    }

    /**
     * The field a step's 201 must name (exchange property set by the route right before the call, e.g. the bundle's
     * {@code dispatchId}): a 201 that does not name it (no body, {@code {}}, a text "OK") is a gateway's or a proxy's
     * answer, not the API's, and fails the call in {@link #after} as a system error that counts against the circuit
     * (kind {@code not-an-answer}). Taken as created, the row completed with nothing created and, completed, owed the
     * legacy system no reply; told to the circuit as "up", a gateway answering so charged every row to DEAD.
     */
    static final String CREATED_NAMES = "createdAnswerNames";

    /**
     * What a step's success answer must be ({@code object}, {@code array} or {@code json}: exchange property set by the route right
     * before the call, e.g. the patient record, the consent list): a 2xx that is no such JSON (no body, a text "OK",
     * {@code null}, the other shape) is not the API's answer and fails the call in {@link #after} as a system error
     * that counts against the circuit (kind {@code not-an-answer}). Refused by the step's own check after the circuit
     * had heard "up", a gateway answering so charged every row to DEAD with the circuit closed.
     */
    static final String ANSWER_IS = "answerIs";
    /** {@link #ANSWER_IS}'s values: {@code json} is any JSON value or no body (a text "OK" is a gateway's). */
    static final java.util.Set<String> SHAPES = java.util.Set.of("object", "array", "json");

    /**
     * The field every answer of a step that carries its entity must name (exchange property set by the route right
     * before the call): a 2xx or a 409 ("exists", CONTRACT §3's guest) without it is not the API's answer, as for
     * {@link #CREATED_NAMES}. A field's value is text or a number, not blank.
     */
    static final String ANSWER_NAMES = "answerNames";

    /** The call's declared answer, moved by {@link #before} from the route's properties for {@link #after}. */
    private static final String EXPECTED_SHAPE = "downstreamExpectedShape";
    private static final String EXPECTED_CREATED = "downstreamExpectedCreated";
    private static final String EXPECTED_NAMES = "downstreamExpectedNames";

    /** After an HTTP step, answered or failed: the circuit, the timer, the error counter, the answer's headers. */
    public void after(Exchange exchange) throws HttpOperationFailedException {
        String downstream = exchange.getProperty(DOWNSTREAM, String.class);
        String call = callOf(exchange);
        String created = exchange.removeProperty(EXPECTED_CREATED) instanceof String field ? field : null; // this call's only
        String shape = exchange.removeProperty(EXPECTED_SHAPE) instanceof String is ? is : null;
        String names = exchange.removeProperty(EXPECTED_NAMES) instanceof String field ? field : null;
        Exception failure = exchange.getException();
        if (failure == null) {
            Integer status = exchange.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
            stopTimer(exchange, status == null ? "error" : (status / 100) + "xx");
            exchange.getMessage().getHeaders().keySet().removeIf(name -> !Exchange.HTTP_RESPONSE_CODE.equals(name));
            // the answer as text: a variable that receives it can be read by as many steps as need it
            // (a stream would be empty on its second read)
            String answer;
            try {
                answer = withoutByteOrderMark(exchange.getMessage().getBody(String.class));
            } catch (RuntimeException unreadable) {
                // an answer that cannot be read as text (a charset no JVM knows): told to the circuit like any failed
                // answer — thrown past it, a half-open trial never came back and the circuit stayed half-open for good
                failed(exchange, downstream, call);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "unreadable").increment();
                throw new SystemException(downstream, "answer cannot be read as text (HTTP " + status + ")", null);
            }
            exchange.getMessage().setBody(answer);
            if (markup(answer)) {
                failed(exchange, downstream, call);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "markup").increment();
                throw new SystemException(downstream, "answer is a markup page, not JSON (HTTP " + status + ")", null);
            }
            // read once for every check below, and only when one of them reads it (a 4xx, a declared shape or field)
            boolean blank = answer == null || answer.isBlank();
            boolean read = status != null && (status / 100 == 4 || shape != null || names != null || created != null);
            JsonNode json = read ? jsonValue(answer) : null;
            if (status != null && status / 100 == 4 && !blank && json == null) {
                // a 4xx the step accepts (a search's 404 "none yet") in text that is not JSON: a gateway's or a
                // proxy's ("404 page not found"), as for a 4xx the step does not accept; never "none yet"
                failed(exchange, downstream, call);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "gateway-4xx").increment();
                throw new SystemException(downstream, "answer is a gateway's, not the API's (HTTP " + status + ")", null);
            }
            if (status != null && status / 100 == 2 && shape != null && !isJson(blank, json, shape)) {
                failed(exchange, downstream, call);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "not-an-answer").increment();
                throw new SystemException(downstream, ("json".equals(shape) ? "answer is not JSON" : "answer is not a JSON " + shape)
                        + " (HTTP " + status + ")", null);
            }
            String unnamed = status != null && status == 201 && created != null && !names(json, created) ? created
                    : status != null && (status / 100 == 2 || status == 409) && names != null && !names(json, names) ? names : null;
            if (unnamed != null && status / 100 == 4 && businessMessage(answer) != null) {
                // the API's own refusal (CONTRACT §3's {code,message}, e.g. a 409 that is no "exists"): a business
                // error with its message, as a 4xx the step did not accept; the downstream answered
                answered(exchange, downstream, call);
                throw new HttpOperationFailedException(null, status, null, null, java.util.Map.of(), answer);
            }
            if (unnamed != null) {
                failed(exchange, downstream, call);
                meters.counter("adapter.downstream.errors", "call", call, "kind", "not-an-answer").increment();
                throw new SystemException(downstream, "answer names no " + unnamed + " (HTTP " + status + ")", null);
            }
            answered(exchange, downstream, call);
            return;
        }
        HttpOperationFailedException http = exchange.getException(HttpOperationFailedException.class);
        if (http != null) {
            stopTimer(exchange, (http.getStatusCode() / 100) + "xx");
            if (isRefusal(http)) {
                if (answeredByTheApi(http.getResponseBody())) {
                    answered(exchange, downstream, call); // it answered: a refusal is no sign of an outage
                    if (businessMessage(http.getResponseBody()) == null) {
                        meters.counter("adapter.downstream.errors", "call", call, "kind", "4xx").increment();
                    }
                } else {
                    // a 4xx in text that is not JSON: a gateway's or a proxy's (a lost route's "404 page not found",
                    // "no Route matched"), not the API's answer. Taken for a sign of life, every row was charged
                    // through the outage (DEAD in minutes, each with a DEAD reply) while the circuit heard "up"
                    failed(exchange, downstream, call);
                    meters.counter("adapter.downstream.errors", "call", call, "kind", "gateway-4xx").increment();
                }
            } else { // a 5xx, a "not now" 4xx, a 4xx that is a page and not the API's answer, or a redirect (never
                     // followed: a gateway or address that is wrong, not an answer)
                failed(exchange, downstream, call);
                // the status says more than the page: a gateway's 502 page is a 5xx, its 302 page a 3xx
                int status = http.getStatusCode();
                meters.counter("adapter.downstream.errors", "call", call, "kind", NOT_NOW.contains(status) ? String.valueOf(status)
                        : status >= 300 && status < 400 || status >= 500 ? (status / 100) + "xx"
                        : markup(http.getResponseBody()) ? "markup" : (status / 100) + "xx").increment();
            }
        } else { // the call itself failed: timeout, refused, reset
            stopTimer(exchange, "error");
            failed(exchange, downstream, call);
            meters.counter("adapter.downstream.errors", "call", call, "kind", "transport").increment();
        }
    }

    private static boolean exempt(Exchange exchange) {
        return Boolean.TRUE.equals(exchange.getProperty(CIRCUIT_EXEMPT, Boolean.class));
    }

    private void answered(Exchange exchange, String downstream, String call) {
        if (!exempt(exchange)) {
            circuits.recordSuccess(downstream, call);
        }
    }

    private void failed(Exchange exchange, String downstream, String call) {
        if (!exempt(exchange)) {
            circuits.recordFailure(downstream, call, requestOf(exchange), messageOf(exchange));
        }
    }

    /**
     * The outcome of a registration that ended in an exception. The call was accounted by {@link #after}
     * (circuit, timer, counters); here it is only named. A system error charges the attempt (the call was
     * made); only a call the circuit did not let through defers the row uncharged.
     *
     * @param downstream the downstream of the last call ({@code ${exchangeProperty.downstream}}), or null
     * @param call       the step of the last call ({@code ${exchangeProperty.downstreamCall}}), or null
     * @param msg        the message ({@code ${variable.msg}}), or null when it could not be read
     * @param patient    the legacy patient record ({@code ${variable.patient}}), or null when not read yet
     * @param patientNone true when the failure is the legacy patient lookup's own 404 ({@code ${variable.patientNone}})
     */
    public Outcome classify(Exception failure, String downstream, String call, Registration msg, String patient,
                            Boolean patientNone) {
        String at = call == null ? "unknown" : call;
        if (failure instanceof CircuitOpenException open) {
            log.info("Deferred uncharged: {} circuit is open", open.downstream());
            return Outcome.deferred(open.downstream());
        }
        if (failure instanceof HttpOperationFailedException http) {
            if (refusal(http)) {
                String message = businessMessage(http.getResponseBody());
                if (message != null) {
                    // the code is stored, logged and shown to operators as-is: one that names the row's own patient
                    // (NO_PATIENT_P123A456) is named, not quoted, as its message's values are masked
                    String code = code(http.getResponseBody());
                    boolean nameKnown = nameKnown(msg, patient, patientNone);
                    String shownCode = code == null ? null
                            : !nameKnown ? (CONTRACT_CODES.contains(code) ? code : NON_STANDARD_CODE)
                            : namesThePatient(code, msg, patient) ? NON_STANDARD_CODE : code;
                    Outcome refused = Outcome.businessFailure(shownCode,
                            nameKnown ? PatientDataMask.mask(message, patientValues(msg, patient)) : WITHHELD);
                    log.info("Refused by {} at {}: HTTP {} {}", downstream, at, http.getStatusCode(), refused.failureCode());
                    return refused;
                }
                if (http.getStatusCode() == 404 && answeredByTheApi(http.getResponseBody())) {
                    // CONTRACT §3: the consents', the patient's and the submission's 404 is a business error, also one
                    // whose answer says nothing (an empty body, a code without a message): the reason is ours
                    String code = code(http.getResponseBody());
                    Outcome refused = Outcome.businessFailure(code == null ? null
                            : CONTRACT_CODES.contains(code) ? code : NON_STANDARD_CODE, NOT_FOUND_WITHOUT_MESSAGE);
                    log.info("Refused by {} at {}: HTTP 404 without a message {}", downstream, at, refused.failureCode());
                    return refused;
                }
            }
            log.warn("System error from {} at {}: HTTP {}", downstream, at, http.getStatusCode());
            // the call was made: charged, even if it (re-)opened the circuit
            return Outcome.systemFailure(downstream, call, "HTTP " + http.getStatusCode());
        }
        // a SystemException thrown by a bean a route calls in an expression arrives wrapped (RuntimeBeanExpressionException)
        if (org.apache.camel.util.ObjectHelper.getException(SystemException.class, failure) != null
                || org.apache.camel.util.ObjectHelper.getException(IOException.class, failure) != null) {
            // an answer the flow could not use (no guestId, unreadable body), or the call itself failed (timeout,
            // refused), or its answer's body did (refused when read: camel-http's stream cache wraps that I/O error)
            log.warn("System error from {} at {}: {}", downstream, at, LoggedFailure.describe(failure));
            return Outcome.systemFailure(downstream, call, whatFailed(failure));
        }
        log.error("Registration failed at {}: {}", at, LoggedFailure.describe(failure));
        return Outcome.systemFailure(downstream, call, "unexpected " + failure.getClass().getSimpleName());
    }

    /**
     * What failed, for the attempt's history, in words that carry no data: our own words of a {@link SystemException}
     * (they name fields, never values), else the innermost cause's class ({@code SocketTimeoutException}); never an
     * exception's message (an HTTP client's holds the URL, a patient number in its path).
     */
    static String whatFailed(Exception failure) {
        SystemException own = org.apache.camel.util.ObjectHelper.getException(SystemException.class, failure);
        if (own != null && own.getMessage() != null) {
            return own.getMessage();
        }
        Throwable innermost = failure;
        for (int depth = 0; innermost.getCause() != null && innermost.getCause() != innermost && depth < 10; depth++) {
            innermost = innermost.getCause();
        }
        return innermost.getClass().getSimpleName();
    }

    /** What is stored and shown instead of a downstream's text that could not be masked (no name to mask it with). */
    public static final String WITHHELD = "(text withheld: the patient record could not be read to mask it)";
    private static final String NON_STANDARD_CODE = Outcome.NON_STANDARD_CODE;
    /** The reason of a 404 whose answer gave none (an empty body, a code alone). */
    static final String NOT_FOUND_WITHOUT_MESSAGE = "not found (HTTP 404, no message)";
    /** The codes CONTRACT §3 defines: shown even when no name is known to check a code against. */
    private static final java.util.Set<String> CONTRACT_CODES =
            java.util.Set.of("FORM_NOT_REGISTERED", "GROUP_NOT_FOUND", "FORM_NOT_DISTRIBUTED", "ALREADY_SUBMITTED");

    /**
     * A downstream's text with the row's own patient values masked (see {@link PatientDataMask}): those of the
     * message and, once it was read, of the legacy patient record. Withheld ({@link #WITHHELD}) when the name is not
     * known ({@link #nameKnown}): a downstream may quote the name as the legacy system knows it, and masking by shape
     * finds numbers, not names. The route reads the record before it comes here (inbox-register-record-for-masking).
     */
    String masked(String text, Registration msg, String patient, Boolean patientNone) {
        if (!nameKnown(msg, patient, patientNone)) {
            return WITHHELD;
        }
        return PatientDataMask.mask(text, patientValues(msg, patient));
    }

    /**
     * Whether the patient's name is known to mask a text with: the message names the patient (written whole, not
     * masked as {@code 박*훈}: {@link PatientDataMask#wholeName}), or the legacy record
     * does, or the text is the legacy patient lookup's own contract 404 ({@code patientNone}: about a patient it has
     * no record of, so no name it could quote). A record not read (a 404 of the masking read included: the survey
     * side may know the name from an earlier SEND), answered as something else (a gateway's page, {@code {}}, an
     * error object) or without a name leaves it unknown: the guest account may carry a name from an earlier message.
     */
    boolean nameKnown(Registration msg, String patient, Boolean patientNone) {
        if (msg != null && PatientDataMask.wholeName(msg.patNm()) || Boolean.TRUE.equals(patientNone)) {
            return true;
        }
        JsonNode record = errorBody(patient);
        return record != null && record.path("patNm").isTextual() && !record.path("patNm").asText().isBlank();
    }

    /** The {@code message} of a downstream answer {@code {"code":…,"message":…}} as it came, or null: to decide, never to store. */
    public String message(String answer) {
        return businessMessage(answer);
    }

    /**
     * Whether a downstream's code carries one of the row's patient values: where masking (whole words) finds one,
     * or anywhere inside it (a code glues words: NOPATIENTP123A456), for a value of 4 characters or more.
     */
    boolean namesThePatient(String code, Registration msg, String patient) {
        java.util.List<String> values = patientValues(msg, patient);
        if (!code.equals(PatientDataMask.mask(code, values))) {
            return true;
        }
        String folded = code.toUpperCase(java.util.Locale.ROOT);
        for (String value : values) {
            if (value != null && value.strip().length() >= 4
                    && folded.contains(value.strip().toUpperCase(java.util.Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    private java.util.List<String> patientValues(Registration msg, String patient) {
        java.util.List<String> values = new java.util.ArrayList<>();
        if (msg != null) {
            values.add(msg.patno());
            values.add(msg.patNm());
            values.add(msg.mobileNo());
        }
        JsonNode record = errorBody(patient);
        if (record != null) {
            values.add(record.path("patno").asText(null));
            values.add(record.path("patNm").asText(null));
            values.add(record.path("mobileNo").asText(null));
        }
        return values;
    }

    /**
     * A downstream answer's {@code message}, decoded from its JSON and then masked as {@link #masked} does, or null
     * when it has none. Masking the raw JSON missed what JSON escapes ({@code \\u0000}, a name as {@code \\uD64D…}).
     */
    public String maskedMessage(String answer, Registration msg, String patient) {
        String message = businessMessage(answer);
        return message == null ? null : masked(message, msg, patient, null);
    }

    private void stopTimer(Exchange exchange, String outcome) {
        Long started = exchange.removeProperty(STARTED) instanceof Long l ? l : null;
        if (started != null) {
            Timer.builder("adapter.downstream.calls").tag("call", callOf(exchange)).tag("outcome", outcome)
                    .serviceLevelObjectives(com.hospital.surveyinbox.config.LatencyBuckets.DOWNSTREAM).register(meters).record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * Whether an answer ({@code blank}, or read as {@code node}: null when no JSON) is one JSON value of {@code shape}:
     * {@code object}, {@code array}, or {@code json} (any, or none).
     */
    private static boolean isJson(boolean blank, JsonNode node, String shape) {
        if (blank) {
            return "json".equals(shape);
        }
        return node != null && switch (shape) {
            case "array" -> node.isArray();
            case "object" -> node.isObject();
            default -> true;
        };
    }

    /** Whether an answer read as {@code node} is a JSON object naming {@code field} with a value (text or a number, not blank). */
    private static boolean names(JsonNode node, String field) {
        JsonNode value = node == null || !node.isObject() ? null : node.get(field);
        return value != null && (value.isTextual() || value.isNumber()) && !value.asText().isBlank();
    }

    /** The message a call is made for (its subject: the same on every retry of a row, and on the synchronous path). */
    private static int messageOf(Exchange exchange) {
        com.hospital.surveyinbox.inbox.ClaimedRow row = exchange.getProperty(ClaimRepository.ROW, com.hospital.surveyinbox.inbox.ClaimedRow.class);
        return row == null ? 0 : java.util.Objects.hashCode(row.srvyDrawupNo());
    }

    private static int requestOf(Exchange exchange) {
        Integer request = exchange.getProperty(REQUEST, Integer.class);
        return request == null ? 0 : request;
    }

    /** The enclosing {@code step} id names the call; a bare HTTP step is named by its downstream. */
    private static String callOf(Exchange exchange) {
        String call = exchange.getProperty(CALL, String.class);
        return call == null ? "unknown" : call;
    }

    /**
     * The downstream a call goes to: the endpoint (scheme, host, port; a {@code toD} keeps the path out of it)
     * plus the request path ({@code CamelHttpPath}), matched against the configured base URLs, the longest
     * first — so downstreams behind one host (an API gateway) are told apart by their path.
     */
    String downstreamOf(String uri, String path) {
        if (uri == null) {
            return "other";
        }
        String target = uri.replaceFirst("^https?:/*", "").replaceFirst("[?].*$", "");
        if (path != null && !path.isEmpty()) {
            target = target.replaceFirst("/+$", "") + (path.startsWith("/") ? path : "/" + path);
        }
        String best = "other";
        int bestLength = -1;
        for (String[] candidate : new String[][] {{"legacy", properties.getLegacy().getBaseUrl()},
                {"account", properties.getAccount().getBaseUrl()}, {"survey", properties.getSurvey().getBaseUrl()}}) {
            if (candidate[1] == null) {
                continue;
            }
            String base = candidate[1].replaceFirst("^https?:/*", "").replaceFirst("/+$", "");
            boolean under = target.equals(base) || target.startsWith(base + "/");
            if (under && base.length() > bestLength) {
                best = candidate[0];
                bestLength = base.length();
            }
        }
        return best;
    }

    private String businessMessage(String body) {
        JsonNode error = errorBody(body);
        if (error != null && error.hasNonNull("message") && !error.get("message").asText().isBlank()) {
            return error.get("message").asText();
        }
        return null;
    }

    private JsonNode errorBody(String body) {
        try {
            JsonNode node = body == null ? null : mapper.readTree(withoutByteOrderMark(body));
            return node != null && node.isObject() ? node : null;
        } catch (IOException e) {
            return null;
        }
    }

}
