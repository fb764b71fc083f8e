package com.hospital.surveyinbox.reception;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.OwnDatabase;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A synchronous lease (rollback toggle) expires when its holder said, from the holder's own bounds (and never before
 * the taker's own bound from when it was taken): a pod whose
 * timeouts are shorter (a configuration roll, a JDBC URL's socketTimeout on one pod) took the lease of a registration
 * still running on another and registered the subject beside it (a resend twice, a SUBMIT before its bundle). A
 * lease an older version took (no expiry recorded) expires by its age as before. A database of its own.
 */
class SynchronousLeaseExpiryTest {

    static OwnDatabase database;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrated() {
        database = OwnDatabase.migrated("lease_expiry");
        jdbc = database.jdbc();
    }

    @AfterAll
    static void drop() {
        database.close();
    }

    @Test
    void aPodWithShorterBoundsDoesNotTakeALeaseItsHolderStillHolds() {
        assertThat(claim("S-1", "pod-a", 600_000)).isEqualTo("pod-a");
        jdbc.update("UPDATE synchronous_lease SET taken_at = now() - INTERVAL '5 minutes' WHERE srvy_drawup_no = 'S-1'");

        // 5 minutes old: past pod b's 2 minutes, within pod a's 10
        assertThat(claim("S-1", "pod-b", 120_000)).as("pod b, while pod a's registration may still run").isNull();

        // past the holder's own expiry: taken, with the taker's expiry
        jdbc.update("UPDATE synchronous_lease SET expires_at = now() - INTERVAL '1 second' WHERE srvy_drawup_no = 'S-1'");
        assertThat(claim("S-1", "pod-b", 120_000)).isEqualTo("pod-b");
        assertThat(jdbc.queryForObject("SELECT extract(epoch FROM expires_at - taken_at) FROM synchronous_lease WHERE srvy_drawup_no = 'S-1'",
                Double.class)).isEqualTo(120.0);
    }

    @Test
    void aLeaseAnOlderVersionTookExpiresByItsAge() {
        jdbc.update("INSERT INTO synchronous_lease (srvy_drawup_no, holder, taken_at) VALUES ('S-2', 'old-pod', now() - INTERVAL '5 minutes')");

        assertThat(claim("S-2", "pod-b", 600_000)).as("younger than this pod's bound").isNull();
        assertThat(claim("S-2", "pod-b", 120_000)).as("older than this pod's bound").isEqualTo("pod-b");

        // an older version took over a lease a newer one had set an expiry on: holder and taken_at are its own, the
        // expiry is the one before it (past): the lease is as old as its taken_at, not expired
        jdbc.update("UPDATE synchronous_lease SET holder = 'old-pod', taken_at = now(), expires_at = now() - INTERVAL '1 minute' "
                + "WHERE srvy_drawup_no = 'S-2'");
        assertThat(claim("S-2", "pod-c", 120_000)).as("the older version's registration just began").isNull();

        // the expiry left by the holder before it, later than the older version's taken_at and already past: the
        // lease is 100 s old, within this pod's 120 s
        jdbc.update("UPDATE synchronous_lease SET holder = 'old-pod', taken_at = now() - INTERVAL '100 seconds', "
                + "expires_at = now() - INTERVAL '5 seconds' WHERE srvy_drawup_no = 'S-2'");
        assertThat(claim("S-2", "pod-c", 120_000)).as("within this pod's bound from taken_at").isNull();
    }

    private static String claim(String subject, String holder, long expireAfterMillis) {
        Map<String, Object> parameters = new java.util.HashMap<>();
        parameters.put("srvyDrawupNo", subject);
        parameters.put("idempotencyKey", null);
        parameters.put("holder", holder);
        parameters.put("expireAfterMillis", expireAfterMillis);
        parameters.put("lockSpace", com.hospital.surveyinbox.inbox.InboxStore.SUBJECT_LOCK_SPACE);
        return database.named().queryForObject(
                database.statement("claim-synchronous-registration"), parameters, (rs, n) -> rs.getString("holder"));
    }
}
