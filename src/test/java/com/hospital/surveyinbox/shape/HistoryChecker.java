package com.hospital.surveyinbox.shape;

import static org.awaitility.Awaitility.await;

import com.hospital.surveyinbox.support.DownstreamSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Proves a scenario's promises from three independent records — what the senders were answered, what the
 * database holds, and what the downstream simulator was asked to do:
 * <ul>
 *   <li>every 200 is stored exactly once, under the inboxId it was answered with;</li>
 *   <li>no row is stored for an answer other than 200 — except a COMMIT cut on the wire, counted
 *       ({@link Report#storedWithout200}) and allowed only where a scenario cuts connections;</li>
 *   <li>no answer other than 200 or 503 (a 502 is the ingress routing to a pod that was gone), and no request left
 *       unanswered until the sender gave up (a hang, not a "retry");</li>
 *   <li>per subject, the downstream effects in acknowledgement order: no SUBMIT registered before its SEND;</li>
 *   <li>every COMPLETED row's effect downstream (a SEND's dispatch bundle, a SUBMIT's submission), and none twice: no
 *       more submissions than COMPLETED SUBMITs, no more resend calls than SENDs after the first (the survey side
 *       keys only the bundle's create; a submission or a resend repeated reaches the patient twice);</li>
 *   <li>every DEAD row has exactly one DEAD reply; nothing is left unfinished.</li>
 * </ul>
 * It names the rows that finished otherwise than their form says ({@link Report#againstTheirForm}): a scenario
 * without downstream faults asserts there are none (a message the survey side accepts never goes DEAD there).
 * It also counts what a scenario without downstream faults must not see ({@link Report#abandoned}, attempts the
 * redelivery job ended for a worker gone; {@link Report#completedOnRetry}, COMPLETED rows registered more than
 * once): a pod stopping mid-registration that the redelivery job rescues still ends "all COMPLETED", 15 minutes late
 * in production, and registers the row a second time.
 */
final class HistoryChecker {

    record Report(long acknowledged, long refused503, long storedWithout200, long noAnswer, List<String> violations,
                  Map<String, Long> answers, long abandoned, long completedOnRetry, java.util.Set<String> pods,
                  List<String> againstTheirForm) {
        @Override
        public String toString() {
            return "acknowledged " + acknowledged + ", 503 " + refused503 + ", no HTTP answer " + noAnswer
                    + ", stored without a 200 " + storedWithout200 + ", abandoned attempts " + abandoned
                    + ", COMPLETED on a retry " + completedOnRetry + ", answered by " + pods
                    + (againstTheirForm.isEmpty() ? "" : ", finished against their form " + againstTheirForm)
                    + ", answers " + answers + (violations.isEmpty() ? "" : ", VIOLATIONS:\n  " + String.join("\n  ", violations));
        }
    }

    private HistoryChecker() {
    }

    static Report check(RecordingSenders senders, JdbcTemplate jdbc, DownstreamSimulator simulator, Duration drain) {
        List<RecordingSenders.Attempt> attempts = senders.attempts();
        String like = senders.prefix() + "%";
        // nothing left unfinished
        await().atMost(drain).pollInterval(Duration.ofMillis(500)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status NOT IN ('COMPLETED', 'DEAD')",
                Long.class, like) == 0);
        // and every DEAD row's reply delivered (a reply whose legacy call failed, e.g. behind an open circuit, is
        // retried by the redelivery job)
        await().atMost(drain).pollInterval(Duration.ofMillis(500)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'DEAD' AND reply_status <> 'SENT'",
                Long.class, like) == 0);

        List<String> violations = new ArrayList<>();
        Map<String, Long> answers = new LinkedHashMap<>();
        Map<String, Long> acknowledgedPerKey = new HashMap<>();
        // every row of the run in one read (subject and type by id)
        Map<Long, Map<String, Object>> rowsById = new HashMap<>();
        for (Map<String, Object> row : jdbc.queryForList("SELECT id, srvy_drawup_no, msg_type FROM inbox_message"
                + " WHERE srvy_drawup_no LIKE ?", like)) {
            rowsById.put(((Number) row.get("id")).longValue(), row);
        }
        for (RecordingSenders.Attempt a : attempts) {
            answers.merge(Integer.toString(a.status()), 1L, Long::sum);
            // -1: no HTTP answer at all — a kept-alive connection the ingress closed as a reload retired its old worker,
            // just as the sender reused it. The sender retries it like a 503; that nothing was stored for it is
            // checked below (stored without a 200). Any HTTP status other than 200 or 503 (a 502) is a violation.
            if (a.status() != 200 && a.status() != 503 && a.status() != -1) {
                violations.add(a.msgType() + " " + a.subject() + " answered " + a.status() + " (pod " + a.pod() + ")");
            }
            // the sender's own deadline ran out: the service held its transaction instead of answering
            if (a.status() == -1 && "HttpTimeoutException".equals(a.error())) {
                violations.add(a.msgType() + " " + a.subject() + " unanswered until the sender gave up after "
                        + (a.answeredAt() - a.sentAt()) / 1_000_000 + " ms");
            }
            if (a.status() == 200) {
                acknowledgedPerKey.merge(a.subject() + "/" + a.msgType(), 1L, Long::sum);
                Map<String, Object> row = a.inboxId() == null ? null : rowsById.get(Long.parseLong(a.inboxId()));
                if (row == null || !a.subject().equals(row.get("srvy_drawup_no")) || !a.msgType().equals(row.get("msg_type"))) {
                    violations.add("200 for " + a.msgType() + " " + a.subject() + " as inbox " + a.inboxId() + ", stored: " + row);
                }
            }
        }
        Map<String, Long> storedPerKey = new HashMap<>();
        for (Map<String, Object> r : jdbc.queryForList("SELECT srvy_drawup_no || '/' || msg_type AS k, count(*) AS n"
                + " FROM inbox_message WHERE srvy_drawup_no LIKE ? GROUP BY 1", like)) {
            storedPerKey.put((String) r.get("k"), ((Number) r.get("n")).longValue());
        }
        long storedWithout200 = 0;
        for (Map.Entry<String, Long> stored : storedPerKey.entrySet()) {
            long acknowledged = acknowledgedPerKey.getOrDefault(stored.getKey(), 0L);
            if (stored.getValue() < acknowledged) {
                violations.add(stored.getKey() + ": " + acknowledged + " acknowledged, " + stored.getValue() + " stored (lost)");
            }
            storedWithout200 += Math.max(0, stored.getValue() - acknowledged);
        }
        for (String key : acknowledgedPerKey.keySet()) {
            if (!storedPerKey.containsKey(key)) {
                violations.add(key + ": acknowledged, nothing stored (lost)");
            }
        }

        List<String> subjects = jdbc.queryForList("SELECT DISTINCT srvy_drawup_no FROM inbox_message WHERE srvy_drawup_no LIKE ?",
                String.class, like);
        Map<String, Long> completedPerKey = new HashMap<>();
        for (Map<String, Object> r : jdbc.queryForList("SELECT srvy_drawup_no || '/' || msg_type AS k, count(*) AS n"
                + " FROM inbox_message WHERE srvy_drawup_no LIKE ? AND status = 'COMPLETED' GROUP BY 1", like)) {
            completedPerKey.put((String) r.get("k"), ((Number) r.get("n")).longValue());
        }
        for (String subject : subjects) {
            List<DownstreamSimulator.Event> events = simulator.events(subject);
            long sends = storedPerKey.getOrDefault(subject + "/SEND", 0L);
            long resends = events.stream().filter(e -> e.kind().equals("RESEND")).count();
            if (resends > Math.max(0, sends - 1)) {
                violations.add(subject + ": " + resends + " resend calls for " + sends + " stored SENDs");
            }
            if (completedPerKey.getOrDefault(subject + "/SEND", 0L) > 0 && !simulator.hasBundle(subject)) {
                violations.add(subject + ": SEND COMPLETED without a dispatch bundle");
            }
            long submits = completedPerKey.getOrDefault(subject + "/SUBMIT", 0L);
            long submissions = events.stream().filter(e -> e.kind().equals("SUBMISSION")).count();
            // a SUBMIT registered before its SEND finished finds no dispatch (the ordering guard failed), even if a retry
            // later succeeds: the survey side says so (the stored reason may be masked or withheld)
            if (events.stream().anyMatch(e -> e.kind().equals("SUBMISSION_WITHOUT_BUNDLE"))) {
                violations.add(subject + ": its SUBMIT was registered before its SEND (no dispatch yet)");
            }
            if (submits > 0 && submissions == 0) {
                violations.add(subject + ": SUBMIT COMPLETED without a submission");
            }
            if (submissions > submits) {
                violations.add(subject + ": " + submissions + " submissions for " + submits + " COMPLETED SUBMITs");
            }
        }
        for (Map<String, Object> dead : jdbc.queryForList("SELECT srvy_drawup_no, count(*) AS n FROM inbox_message"
                + " WHERE srvy_drawup_no LIKE ? AND status = 'DEAD' GROUP BY 1", like)) {
            String subject = (String) dead.get("srvy_drawup_no");
            long replies = simulator.replies(subject).stream().map(r -> r.path("reasonCode").asText())
                    .filter(code -> Objects.equals(code, "DEAD")).count();
            if (replies != ((Number) dead.get("n")).longValue()) {
                violations.add(subject + ": " + dead.get("n") + " DEAD rows, " + replies + " DEAD replies");
            }
        }
        // rows that finished otherwise than their form says (RecordingSenders.unregistered): a row the survey side
        // accepts gone DEAD, or an unregistered form's SEND COMPLETED. Asserted where no downstream fails (a poisoned
        // lookup sends rows of a known form DEAD on purpose)
        List<String> againstTheirForm = new ArrayList<>();
        for (Map<String, Object> r : jdbc.queryForList("SELECT id, srvy_drawup_no, msg_type, status FROM inbox_message"
                + " WHERE srvy_drawup_no LIKE ? AND status IN ('COMPLETED', 'DEAD')", like)) {
            boolean dead = "DEAD".equals(r.get("status"));
            boolean unregisteredSend = "SEND".equals(r.get("msg_type"))
                    && senders.unregistered((String) r.get("srvy_drawup_no"));
            if (dead != unregisteredSend) {
                againstTheirForm.add(r.get("msg_type") + " " + r.get("srvy_drawup_no") + " (inbox " + r.get("id") + ") "
                        + r.get("status"));
            }
        }
        long abandoned = jdbc.queryForObject("SELECT count(*) FROM inbox_attempt a JOIN inbox_message m ON m.id = a.inbox_id"
                + " WHERE m.srvy_drawup_no LIKE ? AND a.outcome = 'ABANDONED'", Long.class, like);
        long completedOnRetry = jdbc.queryForObject("SELECT count(*) FROM inbox_message WHERE srvy_drawup_no LIKE ?"
                + " AND status = 'COMPLETED' AND attempts > 1", Long.class, like);
        java.util.Set<String> pods = new java.util.TreeSet<>();
        // the pods the ingress sent acknowledged requests to (the X-Upstream it named), not those a test reached directly
        attempts.stream().filter(a -> a.status() == 200 && a.pod() != null && !a.pod().startsWith("direct "))
                .forEach(a -> pods.add(a.pod()));
        long acknowledged = attempts.stream().filter(a -> a.status() == 200).count();
        long refused = attempts.stream().filter(a -> a.status() == 503).count();
        long noAnswer = attempts.stream().filter(a -> a.status() == -1).count();
        attempts.stream().filter(a -> a.status() == -1).map(a -> a.error() + " after "
                + (a.answeredAt() - a.sentAt()) / 1_000_000 + " ms").distinct().limit(5)
                .forEach(e -> System.out.println("[shape] no HTTP answer: " + e));
        return new Report(acknowledged, refused, storedWithout200, noAnswer, violations, answers, abandoned, completedOnRetry,
                pods, againstTheirForm);
    }
}
