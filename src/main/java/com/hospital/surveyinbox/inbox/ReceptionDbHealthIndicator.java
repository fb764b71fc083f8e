package com.hospital.surveyinbox.inbox;

import com.zaxxer.hikari.HikariPoolMXBean;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.stereotype.Component;

/**
 * The receptions' own connections ({@link ReceptionConnections}) in {@code /actuator/health} as {@code receptionDb},
 * beside Spring Boot's {@code db} (the main pool). After a database outage each pool reconnects on its own backoff
 * (HikariCP: up to 5 s between attempts), so {@code db} can say UP while the receptions' pool is still empty and
 * receptions answer 503. Read from the pool's own figures: a health call borrows none of the receptions'
 * connections (nothing else may hold them), so no caller of the management port can take them away. UP while the
 * pool holds connections; a pool whose connections the database dropped empties at the next reception (each is
 * validated when borrowed) or, with no reception, within {@code spring.datasource.hikari.keepalive-time} (30 s:
 * idle connections are checked then), and {@code db} says DOWN meanwhile. Not in readiness, as {@code db} is not.
 */
@Component("receptionDbHealthIndicator")
public class ReceptionDbHealthIndicator extends AbstractHealthIndicator {

    private final ReceptionConnections receptions;

    public ReceptionDbHealthIndicator(ReceptionConnections receptions) {
        super("reception pool figures not readable");
        this.receptions = receptions;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        HikariPoolMXBean pool = receptions.pool();
        if (pool == null) { // not a Hikari pool (a test's own DataSource): receptions share the main one, see db
            builder.unknown().withDetail("reason", "receptions use the main pool");
            return;
        }
        int total = pool.getTotalConnections();
        (total > 0 ? builder.up() : builder.down())
                .withDetail("connections", total)
                .withDetail("active", pool.getActiveConnections())
                .withDetail("waiting", pool.getThreadsAwaitingConnection());
    }
}
