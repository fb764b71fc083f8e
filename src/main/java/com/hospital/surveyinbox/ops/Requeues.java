package com.hospital.surveyinbox.ops;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hospital.surveyinbox.config.AdapterProperties;
import com.hospital.surveyinbox.inbox.StorableText;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.camel.Body;
import org.apache.camel.processor.aggregate.GroupedBodyAggregationStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.stereotype.Component;

/**
 * What the operator requeues of {@code routes/inbox-requeue.camel.yaml} compute: the named parameters of
 * {@code sql/requeue-row.sql}, {@code sql/abandon-reply.sql} (route {@code inbox-abandon-reply}),
 * {@code sql/retry-reply.sql} and {@code sql/retry-replies.sql} (routes {@code inbox-retry-reply}, {@code inbox-retry-replies})
 * and {@code sql/find-requeue-candidates.sql}, a bulk request read and checked, the ids a bulk requeue takes, and
 * the answers' bodies ({@code noReplyOwed}: the abandon's 409). The route decides what happens and what is answered.
 */
@Component("requeues")
public class Requeues {

    /** A dry run answers this many of the matching ids. */
    static final int FIRST_IDS = 20;
    /**
     * Most rows a {@code lastErrorContains} search reads before masking (their stored texts, at most 2,000
     * characters each): a text more rows hold is refused, to be narrowed by another filter.
     */
    static final int MOST_SEARCHED = 10_000;
    /**
     * Most matching rows a bulk request counts ({@code sql/find-requeue-candidates.sql}'s countCap): a count of every
     * match read a whole DEAD backlog on each dry run. At the cap the answer says so ({@code countCapped}).
     */
    static final int MOST_COUNTED = 100_000;
    /** Longest filter text an operator may send. */
    static final int MAX_FILTER_TEXT = 200;
    /** The filters, each a non-blank text when given. */
    static final List<String> TEXT_FIELDS = List.of("status", "lastErrorContains", "lastErrorCode",
            "srvyDrawupNoPrefix", "receivedFrom", "receivedTo");
    static final Set<String> FIELDS = Stream.concat(TEXT_FIELDS.stream(), Stream.of("dryRun", "limit"))
            .collect(Collectors.toUnmodifiableSet());

    private final com.fasterxml.jackson.databind.ObjectReader reader;
    private final int bulkRequeueMax;
    private final long longestReplyWaitMillis;
    private final long bulkRequeueWithinNanos;

    public Requeues(ObjectMapper objectMapper, AdapterProperties properties) {
        // as the reception reads a message: a key twice ({"dryRun":true,"dryRun":false}) or trailing text is no request
        this.reader = objectMapper.reader()
                .with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .with(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
        this.bulkRequeueMax = properties.getInbox().getBulkRequeueMax();
        this.bulkRequeueWithinNanos = properties.getInbox().getBulkRequeueWithin().toNanos();
        this.longestReplyWaitMillis = Math.max(properties.getInbox().getRetryDelay().toMillis(),
                properties.getInbox().getReplyMaxRetryDelay().toMillis());
    }

    /** Named parameters of {@code sql/requeue-row.sql} and {@code sql/abandon-reply.sql}: the row and the operator it is audited with. */
    public Map<String, Object> params(long id, String operator) {
        return bulkParams(id, operator, null);
    }

    /**
     * Named parameters of {@code sql/requeue-row.sql} for a row a bulk requeue chose by {@code status}: a row whose
     * status changed since (a FAILED row gone DEAD, its DEAD reply owed) is skipped, not requeued as the other.
     */
    public Map<String, Object> bulkParams(long id, String operator, String status) {
        Map<String, Object> params = new java.util.HashMap<>();
        params.put("id", id);
        params.put("actor", Objects.requireNonNull(operator, "an operator's name"));
        params.put("expectedStatus", status);
        return params;
    }

    /** Named parameters of {@code sql/retry-reply.sql}: the row, the operator, and the longest wait a reply can have. */
    public Map<String, Object> retryParams(long id, String operator) {
        return Map.of("id", id, "actor", Objects.requireNonNull(operator, "an operator's name"),
                "dueAfterMillis", longestReplyWaitMillis);
    }

    /** The parameters of retry-replies.sql: every FAILED reply waiting out its backoff, at most bulk-requeue-max. */
    public Map<String, Object> retryRepliesParams(String operator) {
        return Map.of("actor", Objects.requireNonNull(operator, "an operator's name"),
                "dueAfterMillis", longestReplyWaitMillis, "limit", bulkRequeueMax);
    }

    /**
     * A bulk requeue request read from its JSON body: which rows ({@code status} DEAD or FAILED; optionally
     * {@code lastErrorContains}, {@code lastErrorCode}, {@code srvyDrawupNoPrefix}, {@code receivedFrom} /
     * {@code receivedTo} as ISO-8601 times with an offset), whether to only count them ({@code dryRun}, the
     * default) and at most how many to take ({@code limit}, default 100, at most
     * {@code adapter.inbox.bulk-requeue-max}).
     *
     * @param problem           the body of a 400 when the request is not one (then nothing else is set), else null
     * @param params            the named parameters of {@code sql/find-requeue-candidates.sql}
     * @param dryRun            whether the request only counts
     * @param lastErrorContains the text searched in {@code lastError} as operators see it (masked), or null
     * @param take              how many ids the answer names (a dry run's first ids) or the call takes
     */
    public record BulkRequest(Map<String, String> problem, Map<String, Object> params, boolean dryRun,
                              String lastErrorContains, int take) {
    }

    /** Step {@code inbox-requeue-many-read}: the request of a bulk requeue's body. */
    public BulkRequest read(@Body String body) {
        JsonNode json;
        try {
            json = body == null || body.isBlank() ? null : reader.readTree(body);
        } catch (JsonProcessingException e) {
            json = null;
        }
        if (!wellFormed(json)) {
            return refused("a JSON object with only the fields " + new TreeSet<>(FIELDS)
                    + ": filters as non-blank texts (leave one out not to filter by it), dryRun a boolean, limit a whole number");
        }
        String status = json.path("status").asText(null);
        if (!("DEAD".equals(status) || "FAILED".equals(status))) {
            return refused("status must be DEAD or FAILED");
        }
        JsonNode limitNode = json.get("limit");
        int limit = limitNode == null ? defaultLimit() : limitNode.asInt();
        if (limit < 1 || limit > bulkRequeueMax || (limitNode != null && !limitNode.canConvertToInt())) {
            return refused("limit must be 1.." + bulkRequeueMax);
        }
        String lastError = json.path("lastErrorContains").asText(null);
        String lastErrorCode = json.path("lastErrorCode").asText(null);
        String prefix = json.path("srvyDrawupNoPrefix").asText(null);
        if (Stream.of(lastError, lastErrorCode, prefix).anyMatch(t -> t != null && t.length() > MAX_FILTER_TEXT)) {
            return refused("filter texts must be at most " + MAX_FILTER_TEXT + " characters");
        }
        // PostgreSQL refuses a NUL in text (a 500 otherwise); reasons are stored with control characters as spaces
        // (since 6ff49b9) and subjects never hold one
        if (Stream.of(lastError, lastErrorCode, prefix).anyMatch(t -> t != null && !StorableText.isText(t))) {
            return refused("filter texts must not contain control characters or unpaired surrogates");
        }
        OffsetDateTime from;
        OffsetDateTime to;
        try {
            from = json.has("receivedFrom") ? OffsetDateTime.parse(json.get("receivedFrom").asText()) : null;
            to = json.has("receivedTo") ? OffsetDateTime.parse(json.get("receivedTo").asText()) : null;
        } catch (DateTimeParseException e) {
            return refused("receivedFrom and receivedTo must be ISO-8601 times with an offset");
        }
        // java.time reads years up to ±999,999,999; PostgreSQL's timestamps end at 294276 (a 500 otherwise)
        if (Stream.of(from, to).anyMatch(t -> t != null && (t.getYear() < 1 || t.getYear() > 9999))) {
            return refused("receivedFrom and receivedTo must be times in the years 1 to 9999");
        }
        boolean dryRun = !json.has("dryRun") || json.get("dryRun").asBoolean();
        Map<String, Object> params = new HashMap<>();
        params.put("status", status);
        params.put("lastError", lastError == null ? null : longestUnmasked(lastError));
        params.put("lastErrorCode", lastErrorCode);
        params.put("prefix", prefix);
        params.put("receivedFrom", from);
        params.put("receivedTo", to);
        int take = dryRun ? FIRST_IDS : limit;
        params.put("limit", lastError == null ? take : MOST_SEARCHED);
        // one past what is answered, so "more than" is known; a text search is refused past MOST_SEARCHED anyway
        params.put("countCap", (lastError == null ? MOST_COUNTED : MOST_SEARCHED) + 1);
        return new BulkRequest(null, params, dryRun, lastError, take);
    }

    /** The longest part of a searched text without a mask's '*' (the database's first cut), or null when none. */
    static String longestUnmasked(String text) {
        String longest = "";
        for (String part : text.split("\\*+")) {
            longest = part.length() > longest.length() ? part : longest;
        }
        return longest.isEmpty() ? null : longest;
    }

    /**
     * Step {@code inbox-requeue-many-shown}: the candidates whose {@code lastError} holds the searched text as
     * operators see it — masked once more, as every answer shows it ({@link InboxRowView#shapesMasked}) — with
     * {@code matching} counted among those and at most {@code take} of them; the candidates as they are when no
     * text is searched. Matched on the stored text, a search answered for what the mask hides (a phone number
     * stored before the mask learnt its wording, confirmed digit by digit through the dry run's count), and text
     * copied from the masked answer ({@code ***}) matched nothing. Null when more rows than {@link #MOST_SEARCHED}
     * hold the text's first cut (the answer is then a 400: {@link #tooBroad}).
     */
    public List<Map<String, Object>> shown(List<Map<String, Object>> candidates, BulkRequest request) {
        if (request.lastErrorContains() == null) {
            return candidates;
        }
        if (matching(candidates) > MOST_SEARCHED) {
            return null;
        }
        List<Long> ids = candidates.stream()
                .filter(row -> row.get("last_error") instanceof String text
                        && InboxRowView.shapesMasked(text).contains(request.lastErrorContains()))
                .map(row -> ((Number) row.get("id")).longValue()).toList();
        return ids.stream().limit(request.take())
                .<Map<String, Object>>map(id -> Map.of("id", id, "matching", (long) ids.size())).toList();
    }

    /** The body of the 400 for a text search too broad to mask ({@link #shown} answered null). */
    public Map<String, String> tooBroad() {
        return Map.of("error", "more than " + MOST_SEARCHED + " rows hold the lastErrorContains text: narrow the"
                + " search (lastErrorCode, srvyDrawupNoPrefix, receivedFrom/receivedTo)");
    }

    /** Only the known fields, each of its type; a filter given is a text with something in it. */
    private static boolean wellFormed(JsonNode json) {
        if (json == null || !json.isObject()) {
            return false;
        }
        for (Iterator<String> names = json.fieldNames(); names.hasNext(); ) {
            if (!FIELDS.contains(names.next())) {
                return false; // a misspelt filter must never widen a bulk operation
            }
        }
        JsonNode dryRun = json.get("dryRun");
        JsonNode limit = json.get("limit");
        if ((dryRun != null && !dryRun.isBoolean()) || (limit != null && !limit.isIntegralNumber())) {
            return false;
        }
        for (String field : TEXT_FIELDS) {
            JsonNode value = json.get(field);
            // "", "  ", {}, [] or null would filter nothing
            if (value != null && (!value.isTextual() || value.asText().isBlank())) {
                return false;
            }
        }
        return true;
    }

    private static BulkRequest refused(String problem) {
        return new BulkRequest(Map.of("error", problem), null, true, null, 0);
    }

    /** How many rows matched in all ({@code sql/find-requeue-candidates.sql} answers it on each row; {@link #shown} counts a text search's). */
    public long matching(List<Map<String, Object>> candidates) {
        return candidates.isEmpty() ? 0 : ((Number) candidates.get(0).get("matching")).longValue();
    }

    /** The matching rows an answer names: at most {@link #MOST_COUNTED} (the statement counts one past it). */
    private long counted(List<Map<String, Object>> candidates) {
        return Math.min(matching(candidates), MOST_COUNTED);
    }

    /** Whether more rows match than {@link #counted} says. */
    private boolean countCapped(List<Map<String, Object>> candidates) {
        return matching(candidates) > MOST_COUNTED;
    }

    /** What a call without {@code limit} takes: 100, or {@code adapter.inbox.bulk-requeue-max} when lower. */
    private int defaultLimit() {
        return Math.min(100, bulkRequeueMax);
    }

    /** When a bulk requeue starting now stops starting rows (adapter.inbox.bulk-requeue-within), on the JVM's monotonic clock. */
    public long until() {
        return System.nanoTime() + bulkRequeueWithinNanos;
    }

    /** Whether a bulk requeue may still start a row: its time ({@link #until()}) has not run out. */
    public boolean inTime(long until) {
        return until - System.nanoTime() > 0;
    }

    /** The ids a bulk requeue takes: the first {@code room} candidates, oldest first. */
    public List<Long> taken(List<Map<String, Object>> candidates, int room) {
        return candidates.stream().limit(room).map(row -> ((Number) row.get("id")).longValue()).toList();
    }

    /** The answer of a dry run: how many rows match, the first ids, and how many a call takes by default. */
    public Map<String, Object> dryRun(List<Map<String, Object>> candidates) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("dryRun", true);
        body.put("matching", counted(candidates));
        body.put("countCapped", countCapped(candidates)); // more rows match than matching says
        body.put("firstIds", candidates.stream().map(row -> String.valueOf(row.get("id"))).toList());
        // what one call takes by default: the console confirms (and sends as its limit) no more than this
        body.put("takesPerCall", defaultLimit());
        return body;
    }

    /**
     * The answer of a bulk requeue: the rows it requeued ({@code requeued}: each row's answer of
     * {@code sql/requeue-row.sql}; {@code requeued} false for a row another operator or a worker changed
     * meanwhile, null for one deleted meanwhile) and the matching rows it left ({@code remaining}).
     */
    public Map<String, Object> done(Object requeued, List<Map<String, Object>> candidates) {
        List<?> rows = requeued instanceof List<?> list ? list : List.of(); // no split at all: nothing requeued
        List<String> ids = rows.stream().filter(Map.class::isInstance).map(Map.class::cast)
                .filter(row -> Boolean.TRUE.equals(row.get("requeued"))).map(row -> String.valueOf(row.get("inboxId"))).toList();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("dryRun", false);
        body.put("requeued", ids.size());
        body.put("ids", ids);
        body.put("remaining", Math.max(0, counted(candidates) - ids.size()));
        body.put("countCapped", countCapped(candidates)); // remaining is "at least" then
        return body;
    }

    /** The body of a 409 for a row in another status. */
    public Map<String, Object> notRequeueable(String fromStatus) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "only DEAD or FAILED rows with a payload can be requeued");
        body.put("status", fromStatus);
        return body;
    }

    /** The body of a 409 for a row that owes no reply (none, or delivered): nothing to give up. */
    public Map<String, Object> noReplyOwed(String replyStatus) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "no reply is owed: only a PENDING, SENDING or FAILED reply can be abandoned");
        body.put("replyStatus", replyStatus);
        return body;
    }

    /** The body of the reply retry's 409: no reply waits for a try (none owed, delivered, or being sent right now). */
    public Map<String, Object> noReplyToRetry(String replyStatus) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "no reply waits for a try: only a PENDING or FAILED reply can be sent again now");
        body.put("replyStatus", replyStatus);
        return body;
    }

    /** The body of a 409 while earlier bulk requeues fill this pod's room. */
    public Map<String, Object> busy(int pending) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "the events of earlier bulk requeues are still being republished on this pod; retry in a minute");
        body.put("pending", pending);
        return body;
    }

    @Configuration(proxyBeanMethods = false)
    static class Aggregation {

        /** The split of a bulk requeue answers the list of its rows' answers. */
        @Bean("requeuedRows")
        GroupedBodyAggregationStrategy requeuedRows() {
            return new GroupedBodyAggregationStrategy();
        }
    }
}
