package com.hospital.surveyinbox.reception;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.camel.component.platform.http.spi.PlatformHttpEngine;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpConsumer;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpEngine;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.MethodParameter;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodReturnValueHandler;
import org.springframework.web.method.support.HandlerMethodReturnValueHandlerComposite;
import org.springframework.web.method.support.ModelAndViewContainer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * platform-http answers a reception on the container's request thread, in one servlet dispatch.
 *
 * <p>The starter's default engine hands every request to Spring's task executor and returns a
 * {@code CompletableFuture}; Spring MVC then parks the request in servlet async mode and dispatches it a
 * second time through the whole filter chain and {@code DispatcherServlet} once the future completes.
 * For a reception whose work is a commit of about a millisecond, the hand-off and the second dispatch
 * cost more CPU than the work (measured with async-profiler on the accept path: the second dispatch
 * alone was 13 % of the service's CPU). Here the engine runs the route in the calling thread, so the
 * future is already complete when Spring MVC sees it, and {@link CompletedFutures} finishes such a
 * request at once. Tomcat's pool ({@code server.tomcat.threads.max}) bounds concurrent receptions,
 * including the slow synchronous path of the rollback toggle.
 */
@Configuration(proxyBeanMethods = false)
public class ReceptionHttpEngine {

    @Bean(name = "platform-http-engine")
    PlatformHttpEngine platformHttpEngine(@Value("${server.port:8080}") int port) {
        return new SpringBootPlatformHttpEngine(port, Runnable::run);
    }

    @Bean
    static BeanPostProcessor completedFuturesFirst() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                if (bean instanceof RequestMappingHandlerAdapter adapter && adapter.getReturnValueHandlers() != null) {
                    List<HandlerMethodReturnValueHandler> handlers = new ArrayList<>();
                    HandlerMethodReturnValueHandlerComposite others = new HandlerMethodReturnValueHandlerComposite()
                            .addHandlers(adapter.getReturnValueHandlers());
                    handlers.add(new CompletedFutures(others));
                    handlers.addAll(adapter.getReturnValueHandlers());
                    adapter.setReturnValueHandlers(handlers);
                }
                return bean;
            }
        };
    }

    /**
     * A platform-http handler's future that is already complete: the route has written the response, so
     * the request is handled (or its failure rethrown, as the async path would). Anything else goes to
     * Spring MVC's own handlers unchanged.
     */
    static final class CompletedFutures implements HandlerMethodReturnValueHandler {

        private final HandlerMethodReturnValueHandler others;

        CompletedFutures(HandlerMethodReturnValueHandler others) {
            this.others = others;
        }

        @Override
        public boolean supportsReturnType(MethodParameter returnType) {
            return returnType.getContainingClass() == SpringBootPlatformHttpConsumer.class
                    && CompletableFuture.class.isAssignableFrom(returnType.getParameterType());
        }

        @Override
        public void handleReturnValue(Object value, MethodParameter returnType, ModelAndViewContainer mav,
                                      NativeWebRequest request) throws Exception {
            if (value instanceof CompletableFuture<?> future && future.isDone()) {
                try {
                    future.join();
                } catch (CompletionException e) {
                    throw e.getCause() instanceof Exception cause ? cause : e;
                }
                mav.setRequestHandled(true);
                return;
            }
            others.handleReturnValue(value, returnType, mav, request);
        }
    }
}
