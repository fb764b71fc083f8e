package com.hospital.surveyinbox.inbox;

import org.springframework.boot.actuate.jdbc.DataSourceHealthIndicator;
import org.springframework.stereotype.Component;

/**
 * The receptions' own connections ({@link ReceptionConnections}) in {@code /actuator/health} as {@code receptionDb},
 * beside Spring Boot's {@code db} (the main pool). After a database outage each pool reconnects on its own
 * backoff (HikariCP: up to 5 s between attempts), so {@code db} can say UP while receptions still answer 503;
 * this component says when receptions can commit again. Not in readiness, as {@code db} is not
 * (management.endpoint.health.group.readiness): a database outage leaves pods answering the contract's 503.
 */
@Component("receptionDbHealthIndicator")
public class ReceptionDbHealthIndicator extends DataSourceHealthIndicator {

    public ReceptionDbHealthIndicator(ReceptionConnections receptions) {
        super(receptions.dataSource(), "SELECT 1");
    }
}
