package com.hospital.surveyinbox.ops;

import java.util.List;
import java.util.Map;

import com.hospital.surveyinbox.inbox.InboxStatus;
import com.hospital.surveyinbox.inbox.StorableText;
import org.apache.camel.Header;
import org.apache.camel.Message;
import org.apache.camel.component.platform.http.springboot.PlatformHttpMessage;
import org.springframework.stereotype.Component;

/**
 * What the operator reads of {@code routes/inbox-ops.camel.yaml} compute: whether a list request is valid, its
 * row limit, a row id from the path, the views, and the operator a requeue ({@code routes/inbox-requeue.camel.yaml})
 * is audited with. The route decides what to answer; the query runs through
 * {@code jpa:} with parameters the route writes.
 *
 * <p>Request text arrives through {@link Header} bindings, never as Simple parameter strings in the route
 * (Camel's bean binding strips quotes from those and turns the text {@code null} into null).
 */
@Component
public class OpsReads {

    static final int DEFAULT_LIMIT = 50;
    static final int MAX_LIMIT = 500;
    /**
     * The reply states a list can filter by: the replies still owed (a reply that failed waits FAILED for its
     * next try; SENDING while one is on the wire), served by V1's partial index of owed replies however many
     * rows were ever answered.
     */
    static final List<String> OWED_REPLY_STATUSES = List.of("PENDING", "SENDING", "FAILED");

    /** The list's query parameters: any other is refused (400). */
    static final List<String> LIST_PARAMETERS = List.of("status", "srvyDrawupNo", "replyStatus", "limit", "before");

    private final InboxHistory history;

    public OpsReads(InboxHistory history) {
        this.history = history;
    }

    /** The error body of a list request that cannot be answered (400), or null when it can. */
    public Map<String, String> listProblem(@Header("status") Object status, @Header("srvyDrawupNo") Object srvyDrawupNo,
                              @Header("limit") Object limit, @Header("replyStatus") Object replyStatus,
                              @Header("before") Object before, @Header(org.apache.camel.Exchange.HTTP_QUERY) String query) {
        // a misspelt filter (?stauts=DEAD, ?subject=X) answered the newest rows of every status, read as the filtered
        // ones; the name is not echoed
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                String name;
                try {
                    name = java.net.URLDecoder.decode(pair.split("=", 2)[0], java.nio.charset.StandardCharsets.UTF_8);
                } catch (IllegalArgumentException malformed) {
                    name = null; // a broken %-escape
                }
                if (!pair.isEmpty() && !LIST_PARAMETERS.contains(name)) {
                    return error("unknown query parameter; the list's are " + String.join(", ", LIST_PARAMETERS));
                }
            }
        }
        if (!(status == null || status instanceof String) || !(srvyDrawupNo == null || srvyDrawupNo instanceof String)
                || !(limit == null || limit instanceof String) || !(replyStatus == null || replyStatus instanceof String)
                || !(before == null || before instanceof String)) {
            return error("each filter at most once");
        }
        if (before != null && before((String) before) == null) {
            return error("before must be an inboxId (the last one of the page before)");
        }
        if (status != null && !isStatus((String) status)) {
            return error("unknown status; one of " + List.of(InboxStatus.values()));
        }
        if (replyStatus != null && !OWED_REPLY_STATUSES.contains(replyStatus)) {
            return error("replyStatus must be one of " + OWED_REPLY_STATUSES + " (the replies still owed)");
        }
        if (limit != null && limit((String) limit) == null) {
            return error("limit must be 1.." + MAX_LIMIT);
        }
        // searched as text, whatever it holds, but PostgreSQL refuses a NUL in text (a 500 before), and no stored
        // subject holds a control character or half of a surrogate pair
        if (srvyDrawupNo != null && !StorableText.isText((String) srvyDrawupNo)) {
            return error("srvyDrawupNo must not contain control characters or unpaired surrogates");
        }
        return null;
    }

    /** The subject filter: null (every subject) when absent or blank. */
    public String subject(@Header("srvyDrawupNo") String srvyDrawupNo) {
        return srvyDrawupNo == null || srvyDrawupNo.isBlank() ? null : srvyDrawupNo;
    }

    /** The number of rows a list answers: the request's {@code limit}, else (absent or blank) 50. */
    public Integer limit(@Header("limit") String limit) {
        if (limit == null || limit.isBlank()) {
            return DEFAULT_LIMIT;
        }
        try {
            int size = Integer.parseInt(limit);
            return size < 1 || size > MAX_LIMIT ? null : size;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The list's cursor: rows with an id below the request's {@code before} (the last inboxId of the page before, newest
     * first), or every row when it is absent or blank; null when it names no id.
     */
    public Long before(@Header("before") String before) {
        if (before == null || before.isBlank()) {
            return Long.MAX_VALUE;
        }
        try {
            long id = Long.parseLong(before);
            return id > 0 ? id : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The operator's name a change is audited with: the authenticated principal of the HTTP request (Spring
     * Security on {@code /ops/**}). A request without one is refused (500): nothing is changed in nobody's name.
     */
    public String operator(Message message) {
        java.security.Principal principal = message instanceof PlatformHttpMessage http ? http.getRequest().getUserPrincipal() : null;
        if (principal == null || principal.getName() == null) {
            throw new IllegalStateException("an operator's change without an authenticated operator");
        }
        return principal.getName();
    }

    /** The row id of {@code /ops/inbox/{inboxId}}, or null when the path cannot name a row. */
    public Long rowId(@Header("inboxId") String inboxId) {
        try {
            long id = Long.parseLong(inboxId);
            return id > 0 ? id : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    public List<InboxRowView> list(List<InboxRowEntity> rows) {
        return rows.stream().map(InboxRowView::of).toList();
    }

    /** One row with its attempt history and operator audit trail. */
    public InboxRowView detail(InboxRowEntity row) {
        return InboxRowView.of(row, history.attempts(row.getId()), history.audit(row.getId()));
    }

    /**
     * The answer to an operator's change whose row could not be read back (route inbox-ops-changed-row): the change
     * is committed, so what was done and where to read the row, not an error.
     */
    public Map<String, String> changedUnread(Long inboxId, String done) {
        return Map.of("inboxId", Long.toString(inboxId), "resultMessage",
                "inbox " + inboxId + " " + done + "; the row could not be read back just now: GET /ops/inbox/" + inboxId + " shows it");
    }

    /** The body of a 404 for a path that names no row. */
    public Map<String, String> noSuchRow() {
        return error("no such inbox row");
    }

    /** The body of a 503: the database cannot be reached. */
    public Map<String, String> unavailable() {
        return error("inbox temporarily unavailable; please retry");
    }

    /** The body of a 500. */
    public Map<String, String> failed() {
        return error("internal error");
    }

    private static Map<String, String> error(String message) {
        return Map.of("error", message);
    }

    private static boolean isStatus(String status) {
        for (InboxStatus s : InboxStatus.values()) {
            if (s.name().equals(status)) {
                return true;
            }
        }
        return false;
    }
}
