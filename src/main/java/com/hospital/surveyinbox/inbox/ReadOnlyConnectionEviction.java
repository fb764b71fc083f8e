package com.hospital.surveyinbox.inbox;

import com.zaxxer.hikari.SQLExceptionOverride;
import java.sql.SQLException;

/**
 * Evicts a pooled connection refused with SQLState 25006 (a read-only transaction): it reached a standby, or a
 * primary demoted in a failover. HikariCP evicts only on its own list (class 08, 57P0x, ...), and a standby passes
 * the keepalive's {@code isValid}, so such a connection stayed in the pool until its max lifetime (30 minutes),
 * every reception on it answered 503. Evicted, the next connection is opened afresh (to the new primary, once DNS
 * or the virtual IP points there). Set as {@code spring.datasource.hikari.exception-override-class-name}; the
 * receptions' pool copies it from the main pool.
 */
public class ReadOnlyConnectionEviction implements SQLExceptionOverride {

    @java.lang.Override
    public Override adjudicate(SQLException failure) {
        return "25006".equals(failure.getSQLState()) ? Override.MUST_EVICT : Override.CONTINUE_EVICT;
    }
}
