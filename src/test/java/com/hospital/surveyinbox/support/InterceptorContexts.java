package com.hospital.surveyinbox.support;

import com.hospital.surveyinbox.config.InterceptorsFirst;
import org.apache.camel.RoutesBuilder;
import org.apache.camel.builder.RouteConfigurationBuilder;
import org.apache.camel.impl.DefaultCamelContext;

/** A bare context with the interceptors' configurations, InterceptorsFirst and {@code routes}, started (its checks run). */
public final class InterceptorContexts {

    private InterceptorContexts() {
    }

    public static void start(DefaultCamelContext context, RoutesBuilder routes) throws Exception {
        context.addRoutes(new RouteConfigurationBuilder() {
            @Override
            public void configuration() {
                routeConfiguration("inbox-downstream");
                routeConfiguration("inbox-statement-tries");
            }
        });
        context.addRoutes(new InterceptorsFirst());
        context.addRoutes(routes);
        context.start();
    }
}
